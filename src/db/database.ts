import { mkdirSync } from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, Migrator, SqliteDialect } from "kysely";
import { migrationProvider } from "./migrations/index.js";
import type { Database } from "./schema.js";

export type Db = Kysely<Database>;

export const DATABASE_FILE_NAME = "parley.db";

/** Opens (creating when needed) the SQLite file in WAL mode with foreign keys on. */
export function openDatabase(file: string): Db {
  if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}

export interface MigrationReport {
  applied: string[];
}

/** Brings the schema up to date; safe on a new file and on any older version. */
export async function migrateToLatest(db: Db): Promise<MigrationReport> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`database migration ${failed} failed: ${(error as Error).message}`);
  }
  return { applied: (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName) };
}
