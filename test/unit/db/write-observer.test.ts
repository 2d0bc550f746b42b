import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase, type Db } from "../../../src/db/database.js";

let dir: string;
let db: Db;
let seen: string[];

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "parley-observer-"));
  seen = [];
  db = openDatabase(path.join(dir, "parley.db"), { observer: { written: () => seen.push("written"), failed: (err) => seen.push(`failed ${err.code}`) } });
  await migrateToLatest(db);
  await sql`CREATE TABLE blobs (data BLOB)`.execute(db);
  seen = [];
});
afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Holds the connection to the file's present size: a write needing one more page fails with SQLITE_FULL. */
async function fillUp(): Promise<void> {
  const pages = (await sql<{ page_count: number }>`PRAGMA page_count`.execute(db)).rows[0]!.page_count;
  await sql.raw(`PRAGMA max_page_count = ${pages}`).execute(db);
}
const bigRow = () => sql`INSERT INTO blobs VALUES (randomblob(20000))`;

describe("observeWrites", () => {
  it("reports autocommitted writes and commits as written, and reads and transaction control not at all", async () => {
    await bigRow().execute(db);
    await sql`SELECT count(*) FROM blobs`.execute(db);
    await db.transaction().execute(async (trx) => {
      await bigRow().execute(trx);
      await bigRow().execute(trx);
    });
    // The insert, then the COMMIT (the inserts inside the transaction prove nothing until it).
    expect(seen).toEqual(["written", "written"]);
  });

  it("a full disk in a transaction: the caller gets SQLite's SQLITE_FULL (not Kysely's failed ROLLBACK after SQLite's own), reported once", async () => {
    await fillUp();
    const err = await db
      .transaction()
      .execute(async (trx) => {
        await sql`INSERT INTO blobs VALUES (1)`.execute(trx);
        await bigRow().execute(trx);
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "SQLITE_FULL", message: "database or disk is full" });
    expect(seen).toEqual(["failed SQLITE_FULL"]);
    // Nothing of the transaction stayed, and the connection works on.
    expect((await sql<{ n: number }>`SELECT count(*) AS n FROM blobs`.execute(db)).rows[0]!.n).toBe(0);
    await sql.raw("PRAGMA max_page_count = 1073741823").execute(db);
    await bigRow().execute(db);
    expect(seen).toEqual(["failed SQLITE_FULL", "written"]);
  });

  it("errors that are the query's own (a constraint) are not the disk's", async () => {
    await sql`CREATE TABLE unique_things (name TEXT UNIQUE)`.execute(db);
    await sql`INSERT INTO unique_things VALUES ('a')`.execute(db);
    await expect(sql`INSERT INTO unique_things VALUES ('a')`.execute(db)).rejects.toMatchObject({ code: "SQLITE_CONSTRAINT_UNIQUE" });
    expect(seen.filter((s) => s.startsWith("failed"))).toEqual([]);
  });
});
