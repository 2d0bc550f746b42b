import type { SelectQueryBuilder } from "kysely";
import type { Database } from "../schema.js";
import type { Db } from "../database.js";
import type { QueryShapes } from "../query-shapes.js";

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

/**
 * fetchPage for a query built once per shape (see QueryShapes): `build` gets the filters as
 * slots (only those set) and returns the filtered select; the keyset condition, order and
 * limit are added here, also as slots.
 */
export async function shapedPage<TB extends keyof Database, O extends { created_at: string; id: string }, F extends Record<string, unknown>>(
  db: Db,
  shapes: QueryShapes,
  table: TB,
  filters: F,
  page: PageRequest,
  build: (filters: F) => SelectQueryBuilder<Database, TB, O>,
): Promise<Page<O>> {
  const values = { ...filters, limit: page.limit + 1, afterCreatedAt: page.after?.createdAt, afterId: page.after?.id };
  const rows = await shapes.rows(db, `${table}:page:${page.order}`, values, (v) => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let q = build(v) as SelectQueryBuilder<any, any, O>;
    const createdAt = `${table}.created_at`;
    const id = `${table}.id`;
    if (v.afterCreatedAt !== undefined) {
      const cmp = page.order === "asc" ? ">" : "<";
      q = q.where((eb) => eb.or([eb(createdAt, cmp, v.afterCreatedAt), eb.and([eb(createdAt, "=", v.afterCreatedAt), eb(id, cmp, v.afterId)])]));
    }
    return q.orderBy(createdAt, page.order).orderBy(id, page.order).limit(v.limit);
  });
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}
