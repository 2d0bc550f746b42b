import type { Page, PageRequest, SortOrder } from "../db/repositories/keyset.js";
import { CursorCodec } from "./cursor-codec.js";

/** The list envelope of every list endpoint. */
export interface ListEnvelope<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  total: number;
}

export interface ListQuery {
  limit: number;
  order: SortOrder;
  cursor?: string | undefined;
}

/**
 * Runs one page of a list: verifies the cursor against the list's filters, fetches the
 * page and the total (counted, unless the page is the whole list), and signs the next cursor.
 */
export async function listPage<Row extends { created_at: string; id: string }, Item>(options: {
  codec: CursorCodec;
  list: string;
  filters: Record<string, unknown>;
  query: ListQuery;
  fetch: (page: PageRequest) => Promise<Page<Row>>;
  count: () => Promise<number>;
  present: (row: Row) => Item;
}): Promise<ListEnvelope<Item>> {
  const { codec, query } = options;
  const scope = CursorCodec.scope(options.list, { ...options.filters, order: query.order });
  const after = query.cursor === undefined ? undefined : codec.decode(scope, query.cursor);
  const page = await options.fetch({ limit: query.limit, order: query.order, after });
  // A first page with nothing after it holds the whole list: its length is the total, without counting.
  const total = after === undefined && !page.hasMore ? page.rows.length : await options.count();
  const last = page.rows[page.rows.length - 1];
  return {
    data: page.rows.map(options.present),
    has_more: page.hasMore,
    next_cursor: page.hasMore && last ? codec.encode(scope, { createdAt: last.created_at, id: last.id }) : null,
    total,
  };
}
