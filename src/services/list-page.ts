import { JsonText } from "../core/json-text.js";
import type { JsonListRow, Page, PageRequest, SortOrder } from "../db/repositories/keyset.js";
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

interface ListOptions<Row> {
  codec: CursorCodec;
  list: string;
  filters: Record<string, unknown>;
  query: ListQuery;
  fetch: (page: PageRequest) => Promise<Page<Row>>;
  count: () => Promise<number>;
}

type Keyed = { created_at: string; id: string };

/**
 * Runs one page of a list: verifies the cursor against the list's filters, fetches the
 * page and the total (counted, unless the page is the whole list), and signs the next cursor.
 */
async function runPage<Row extends Keyed>(options: ListOptions<Row>): Promise<ListEnvelope<Row>> {
  const { codec, query } = options;
  const scope = CursorCodec.scope(options.list, options.filters, query.order);
  const after = query.cursor === undefined ? undefined : codec.decode(scope, query.cursor);
  const page = await options.fetch({ limit: query.limit, order: query.order, after });
  // A first page with nothing after it holds the whole list: its length is the total, without counting.
  const total = after === undefined && !page.hasMore ? page.rows.length : await options.count();
  const last = page.rows[page.rows.length - 1];
  return {
    data: page.rows,
    has_more: page.hasMore,
    next_cursor: page.hasMore && last ? codec.encode(scope, { createdAt: last.created_at, id: last.id }) : null,
    total,
  };
}

/** A page of a list whose rows `present` turns into the API's items. */
export async function listPage<Row extends Keyed, Item>(options: ListOptions<Row> & { present: (row: Row) => Item }): Promise<ListEnvelope<Item>> {
  const page = await runPage(options);
  return { data: page.data.map(options.present), has_more: page.has_more, next_cursor: page.next_cursor, total: page.total };
}

/**
 * A page of a list whose rows carry each item as JSON text (`item`, see jsonObject): the
 * envelope is written around them, the same text JSON.stringify would make of listPage's.
 */
export async function jsonListPage(options: ListOptions<JsonListRow>): Promise<JsonText> {
  const page = await runPage(options);
  const items = page.data.map((row) => row.item).join(",");
  return new JsonText(`{"data":[${items}],"has_more":${page.has_more},"next_cursor":${JSON.stringify(page.next_cursor)},"total":${page.total}}`);
}
