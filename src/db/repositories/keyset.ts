import type { SelectQueryBuilder } from "kysely";
import type { Database } from "../schema.js";

export type SortOrder = "asc" | "desc";

export interface PageRequest {
  limit: number;
  order: SortOrder;
  /** Continue after this row (exclusive). */
  after?: { createdAt: string; id: string } | undefined;
}

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/**
 * Keyset pagination on `(created_at, id)` of the query's main table: stable while rows are
 * added, and each page costs the same however deep it is.
 */
export async function fetchPage<TB extends keyof Database, O extends { created_at: string; id: string }>(
  query: SelectQueryBuilder<Database, TB, O>,
  table: TB,
  page: PageRequest,
): Promise<Page<O>> {
  // Column references are built from the table name; Kysely cannot type them generically.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let q = query as SelectQueryBuilder<any, any, O>;
  const createdAt = `${table}.created_at`;
  const id = `${table}.id`;
  if (page.after) {
    const { createdAt: c, id: i } = page.after;
    const cmp = page.order === "asc" ? ">" : "<";
    q = q.where((eb) => eb.or([eb(createdAt, cmp, c), eb.and([eb(createdAt, "=", c), eb(id, cmp, i)])]));
  }
  const rows = await q.orderBy(createdAt, page.order).orderBy(id, page.order).limit(page.limit + 1).execute();
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}
