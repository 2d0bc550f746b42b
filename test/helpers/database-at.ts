import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Migrator, type Kysely } from "kysely";
import { expect } from "vitest";
import { DATABASE_FILE_NAME, openDatabase } from "../../src/db/database.js";
import { migrationProvider } from "../../src/db/migrations/index.js";
import { openPostgres, withPostgresColumnTypes } from "../../src/db/postgres.js";
import { testPostgresDatabase } from "./postgres-global-setup.js";
import type { startTestApp } from "./test-app.js";

/** A database left at an older version, and how to start a test app over it (whose start migrates it). */
export interface OlderDatabase {
  /** Open at `migration`: write the rows an older version would have left, then destroy it. */
  db: Kysely<unknown>;
  /** startTestApp's arguments for an app over this database. */
  appArgs: Parameters<typeof startTestApp>;
  /** Removes the database (after the app over it has closed). */
  cleanUp(): Promise<void>;
}

/**
 * A new database of this test lane's dialect (a PostgreSQL database of its own on the postgres
 * lane, else a SQLite file) migrated up to `migration` and no further.
 */
export async function databaseAt(migration: string): Promise<OlderDatabase> {
  // An empty database of its own (the lane's template is migrated to the latest version).
  const postgres = await testPostgresDatabase("template0");
  let older: OlderDatabase;
  if (postgres) {
    older = {
      db: openPostgres(postgres.url) as unknown as Kysely<unknown>,
      appArgs: [{}, { PARLEY_DATABASE_URL: postgres.url }],
      cleanUp: postgres.drop,
    };
  } else {
    const dir = mkdtempSync(path.join(os.tmpdir(), "parley-older-db-"));
    older = {
      db: openDatabase(path.join(dir, DATABASE_FILE_NAME)) as unknown as Kysely<unknown>,
      appArgs: [{ dataDir: dir }],
      cleanUp: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  // PostgreSQL's migrations run with its column types, as migrateToLatest runs them.
  const migrator = new Migrator({ db: postgres ? withPostgresColumnTypes(older.db) : older.db, provider: migrationProvider });
  expect((await migrator.migrateTo(migration)).error).toBeUndefined();
  return older;
}
