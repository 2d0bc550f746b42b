import type { Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Runs a migration's rewrite of rows that an older version stored, on SQLite only. A
 * PostgreSQL database is created by this version from the first migration with no rows, and
 * data reaches it through `parley admin migrate-to-postgres` once its schema is current: no
 * row there was ever written by an older version. So these rewrites, written in SQLite's SQL
 * (rowid, json_extract, PRAGMA), never run on PostgreSQL.
 */
export async function rewriteStoredRows(db: Kysely<unknown>, rewrite: () => Promise<unknown>): Promise<void> {
  if (!isPostgres(db)) await rewrite();
}
