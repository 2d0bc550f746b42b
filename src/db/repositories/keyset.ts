import { sql, type SelectQueryBuilder } from "kysely";
import { jsonObject, type JsonFields } from "../json-object.js";
import type { Database } from "../schema.js";
import type { Db } from "../database.js";
import type { QueryShapes } from "../query-shapes.js";
import { literalLimit } from "../literal-limit.js";
import { dialectOf } from "../dialect.js";

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

/** A list row read as its API item, JSON text that the database wrote (see jsonObject), with its keyset columns. */
export interface JsonListRow {
  item: string;
  created_at: string;
  id: string;
}

/** What a JSON list page selects of `table`: the item `fields` as JSON text, and the keyset columns. */
export function jsonListSelection(db: Db, table: string, fields: JsonFields) {
  return [jsonObject(dialectOf(db), fields).as("item"), sql<string>`${sql.ref(`${table}.created_at`)}`.as("created_at"), sql<string>`${sql.ref(`${table}.id`)}`.as("id")] as const;
}

/**
 * The keyset condition (rows after `after`, exclusive), the order on `(created_at, id)` of
 * `table` and the limit (written into the SQL, see literalLimit), added to `query`: the same
 * whether the query is built per request or once per shape (where `after`'s fields are slots
 * standing for values).
 */
export function keysetOrdered<O>(
  // Column references are built from the table name; Kysely cannot type them generically.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query: SelectQueryBuilder<any, any, O>,
  table: string,
  order: SortOrder,
  after: { createdAt: unknown; id: unknown } | undefined,
  limit: number,
) {
  let q = query;
  const createdAt = `${table}.created_at`;
  const id = `${table}.id`;
  if (after) {
    // A row value: SQLite reads the rows after it as one range of the (…, created_at, id) index.
    // Spelled as (created_at < a OR (created_at = a AND id < b)) it could not, and walked every
    // row from the list's start to the cursor: a deep page cost as much as all those before it.
    const cmp = order === "asc" ? ">" : "<";
    q = q.where((eb) => eb(eb.refTuple(createdAt, id), cmp, eb.tuple(after.createdAt, after.id)));
  }
  return q.orderBy(createdAt, order).orderBy(id, order).limit(literalLimit(limit));
}

/** The page of `rows` read with a limit of `limit + 1`: the extra row only says there are more. */
function toPage<O>(rows: O[], limit: number): Page<O> {
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
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
  const rows = await keysetOrdered(query, table, page.order, page.after, page.limit + 1).execute();
  return toPage(rows, page.limit);
}

/**
 * fetchPage for a query built once per shape (see QueryShapes): `build` gets the filters as
 * slots (only those set) and returns the filtered select; the keyset condition and order are
 * added here, also as slots, and the limit as a number: each page size is its own shape.
 */
export async function shapedPage<TB extends keyof Database, O extends { created_at: string; id: string }, F extends Record<string, unknown>>(
  db: Db,
  shapes: QueryShapes,
  table: TB,
  filters: F,
  page: PageRequest,
  build: (filters: F) => SelectQueryBuilder<Database, TB, O>,
): Promise<Page<O>> {
  // Object.assign, not `{ ...filters, afterCreatedAt, ... }`: on Node 20 a spread followed by
  // more properties is many times slower, and its garbage outlives young collections
  // (docs/api-throughput.md, seventh round).
  const values = Object.assign({}, filters, { afterCreatedAt: page.after?.createdAt, afterId: page.after?.id });
  const limit = page.limit + 1;
  const rows = await shapes.rows(db, `${table}:page:${page.order}:${limit}`, values, (v) =>
    keysetOrdered(build(v), table, page.order, v.afterCreatedAt === undefined ? undefined : { createdAt: v.afterCreatedAt, id: v.afterId }, limit),
  );
  return toPage(rows, page.limit);
}
