import type SQLite from "better-sqlite3";
import type { Db } from "./database.js";

/**
 * Tells whether the database may have changed since a moment: a value that differs whenever
 * it may have. On SQLite, whenever this connection has written anything (total_changes(),
 * counted even if the transaction is later rolled back) or any other connection, in this
 * process or another (the admin CLI), has committed anything (PRAGMA data_version): while it
 * is unchanged every query reads what it read before. On PostgreSQL, whenever the accounts or
 * api_keys tables may have changed (PostgresChanges): only what is read from those may be
 * kept under it. A result read under an unchanged value may be reused: see ApiKeysService.
 */
export type DatabaseGeneration = () => string;

const generations = new WeakMap<Db, DatabaseGeneration>();

/** Called by openDatabase and openPostgres for the database behind `db`. */
export function registerGeneration(db: Db, generation: DatabaseGeneration): void {
  generations.set(db, generation);
}

/** The generation of one SQLite connection. */
export function sqliteGeneration(sqlite: SQLite.Database): DatabaseGeneration {
  // Two plain statements, not one reading the pragma_data_version table: that table prepares
  // its own PRAGMA statement at each read, which costs more than both of these.
  const changes = sqlite.prepare("SELECT total_changes()").pluck(true);
  const version = sqlite.prepare("PRAGMA data_version").pluck(true);
  return () => `${changes.get() as number}:${version.get() as number}`;
}

/** The generation of a database opened by openDatabase; undefined for any other. */
export function databaseGeneration(db: Db): DatabaseGeneration | undefined {
  return generations.get(db);
}
