import { PostgresAdapter, type Kysely } from "kysely";

/**
 * The SQL engines Parley stores its data in: SQLite in the data directory (one node, the
 * default) or PostgreSQL (several nodes, PARLEY_DATABASE_URL). Repositories and migrations are
 * written once; where the two engines need different SQL they ask which one they run on here,
 * and the forms that differ live in src/db/portable-sql.ts.
 */
export type SqlDialect = "sqlite" | "postgres";

/** The dialect a Kysely instance (or a transaction of one) speaks. */
export function dialectOf(db: Kysely<unknown> | Kysely<any>): SqlDialect {
  // getExecutor is marked internal, but it is the one place the adapter is reachable from a
  // transaction or the Migrator's connection, where a registry keyed by instance would miss.
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

export function isPostgres(db: Kysely<unknown> | Kysely<any>): boolean {
  return dialectOf(db) === "postgres";
}

/**
 * Whether `err` is a unique index refusing a row: on SQLite, one over `sqliteColumn`
 * (`table.column`, as its message names it); on PostgreSQL, one of `postgresIndexes` (its error
 * names the index).
 */
export function isUniqueViolation(err: unknown, where: { sqliteColumn: string; postgresIndexes: readonly string[] }): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  if (e?.code === "SQLITE_CONSTRAINT_UNIQUE") return String(e.message).includes(where.sqliteColumn);
  return e?.code === "23505" && where.postgresIndexes.includes(String(e.constraint));
}
