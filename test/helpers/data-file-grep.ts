import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { DATABASE_FILE_NAME } from "../../src/db/database.js";

/** The database's files in `dataDir` that exist: parley.db and its -wal (the -shm holds no rows). */
export function databaseFiles(dataDir: string): string[] {
  const file = path.join(dataDir, DATABASE_FILE_NAME);
  return [file, `${file}-wal`].filter((f) => existsSync(f));
}

/**
 * Which of `strings` the database's files hold, read as bytes (UTF-8), whatever SQLite's pages
 * say is live: a freed cell, a free page or an old page version in the WAL counts too.
 */
export function stringsInDataFiles(dataDir: string, strings: readonly string[]): string[] {
  const contents = databaseFiles(dataDir).map((f) => readFileSync(f));
  return strings.filter((s) => contents.some((bytes) => bytes.includes(Buffer.from(s, "utf8"))));
}
