import { closeSync, openSync } from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, Migrator, sql, SqliteDialect } from "kysely";
import { retryWhileBusy } from "./busy-retry.js";
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenFile } from "../core/private-files.js";
import { migrationProvider } from "./migrations/index.js";
import { isPostgres } from "./dialect.js";
import { withPostgresColumnTypes } from "./postgres.js";
import { registerGeneration, sqliteGeneration } from "./database-generation.js";
import { withStatementCache } from "./statement-cache.js";
import { observeWrites, type DatabaseWriteObserver } from "./write-observer.js";
import type { Database } from "./schema.js";

export type Db = Kysely<Database>;

export const DATABASE_FILE_NAME = "parley.db";

/** The writes of a database no one watches (the CLI's). */
const UNOBSERVED: DatabaseWriteObserver = { written: () => {}, failed: () => {} };

/** The files SQLite keeps for `file` in WAL mode. */
function sqliteFiles(file: string): string[] {
  return [file, `${file}-wal`, `${file}-shm`];
}

/**
 * Opens (creating when needed) the SQLite file in WAL mode with foreign keys and secure_delete
 * on. The file and its directory are owner-only: a new file is made 0600 before SQLite opens it
 * (SQLite gives its -wal and -shm files the database file's mode), older ones are tightened.
 * With `observer`, whether writes reach the file is reported (the service's storage health);
 * see observeWrites.
 */
export function openDatabase(file: string, options: { observer?: DatabaseWriteObserver } = {}): Db {
  if (file !== ":memory:") {
    ensurePrivateDir(path.dirname(file));
    closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
    for (const f of sqliteFiles(file)) tightenFile(f);
  }
  const sqlite = new SQLite(file);
  // First, so that a second process opening the file meanwhile waits instead of failing.
  sqlite.pragma("busy_timeout = 5000");
  retryWhileBusy(() => sqlite.pragma("journal_mode = WAL"));
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // Deleted and overwritten content is zeroed, not left in free space: a call's removed
  // transcript must not stay readable in the file (see CallContentRemoval).
  sqlite.pragma("secure_delete = ON");
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: observeWrites(withStatementCache(sqlite), sqlite, options.observer ?? UNOBSERVED) }) });
  registerGeneration(db, sqliteGeneration(sqlite));
  return db;
}

export interface MigrationReport {
  applied: string[];
}

/**
 * Brings the schema up to date; safe on a new file and on any older version, and when several
 * processes start on one file together. Kysely takes no lock on SQLite, so the whole upgrade
 * runs in one write transaction (`BEGIN IMMEDIATE`): other processes wait for it, then find
 * nothing left to do, and a failed upgrade leaves the database as it was. PostgreSQL: see below.
 */
export async function migrateToLatest(db: Db): Promise<MigrationReport> {
  if (isPostgres(db)) {
    // Kysely's Migrator locks PostgreSQL itself (an advisory lock) and runs the upgrade in one
    // transaction: nodes starting together wait for each other, and a failure changes nothing.
    return report(await new Migrator({ db: withPostgresColumnTypes(db), provider: migrationProvider }).migrateToLatest());
  }
  const migrator = new Migrator({ db, provider: migrationProvider });
  await sql`BEGIN IMMEDIATE`.execute(db);
  let outcome: Awaited<ReturnType<Migrator["migrateToLatest"]>>;
  try {
    outcome = await migrator.migrateToLatest();
  } catch (err) {
    await sql`ROLLBACK`.execute(db);
    throw err;
  }
  await (outcome.error ? sql`ROLLBACK` : sql`COMMIT`).execute(db);
  return report(outcome);
}

/** The migrations applied, or the error of the one that failed. */
function report({ error, results }: Awaited<ReturnType<Migrator["migrateToLatest"]>>): MigrationReport {
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`database migration ${failed} failed: ${(error as Error).message}`);
  }
  return { applied: (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName) };
}
