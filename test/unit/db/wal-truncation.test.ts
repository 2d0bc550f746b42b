import { mkdtempSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../../src/db/database.js";
import { truncateWal, WalTruncation } from "../../../src/db/wal-truncation.js";
import { stringsInDataFiles } from "../../helpers/data-file-grep.js";

const SECRET = "Zebulon Quaxworth's card 4111";

let dir: string;
let db: Db | undefined;
let reader: SQLite.Database | undefined;

afterEach(async () => {
  reader?.close();
  reader = undefined;
  await db?.destroy();
  db = undefined;
});

/** A database file whose row held SECRET, then lost it (the page versions with it are still in the WAL). */
async function removedContent(): Promise<{ db: Db; file: string }> {
  dir = mkdtempSync(path.join(os.tmpdir(), "parley-wal-"));
  const file = path.join(dir, "parley.db");
  db = openDatabase(file);
  await sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`.execute(db);
  await sql`INSERT INTO notes (body) VALUES (${SECRET}), ('kept'), (${SECRET}), ('kept too')`.execute(db);
  // Emptied in place and deleted: both free the cell that held it.
  await sql`UPDATE notes SET body = NULL WHERE id = 1`.execute(db);
  await sql`DELETE FROM notes WHERE id = 3`.execute(db);
  return { db, file };
}

const walSize = (file: string) => statSync(`${file}-wal`).size;

describe("secure_delete and emptying the WAL", () => {
  it("a removed value is zeroed in the database file and gone from the WAL once it is emptied", async () => {
    const { db, file } = await removedContent();
    // Before: the WAL still holds the page as it was written with the value.
    expect(stringsInDataFiles(dir, [SECRET])).toEqual([SECRET]);
    expect(await truncateWal(db)).toEqual({ truncated: true, busy: false });
    expect(walSize(file)).toBe(0);
    // The database file got the page without it, and secure_delete zeroed the freed cell.
    expect(stringsInDataFiles(dir, [SECRET])).toEqual([]);
    expect((await sql<{ secure_delete: number }>`PRAGMA secure_delete`.execute(db)).rows[0]?.secure_delete).toBe(1);
  });

  it("while another process reads the WAL: answers busy at once, keeps the connection's busy_timeout, and a retry empties it once the reader is done", async () => {
    const { db, file } = await removedContent();
    // Another connection (a backup, the admin CLI) in the middle of a read.
    reader = new SQLite(file);
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM notes").get();

    const busyTries: number[] = [];
    const wal = new WalTruncation(db, (tries) => busyTries.push(tries));
    expect(await wal.run()).toBe(false);
    expect(busyTries).toEqual([1]);
    expect(wal.pending).toBe(true);
    expect(walSize(file)).toBeGreaterThan(0);
    // Other statements still wait as long as they did.
    expect((await sql<{ timeout: number }>`PRAGMA busy_timeout`.execute(db)).rows[0]?.timeout).toBe(5000);
    // The database still answers meanwhile.
    expect((await sql<{ n: number }>`SELECT count(*) AS n FROM notes`.execute(db)).rows[0]?.n).toBe(3);

    reader.exec("COMMIT");
    for (let i = 0; i < 100 && wal.pending; i++) await new Promise((r) => setTimeout(r, 50));
    expect(wal.pending).toBe(false);
    expect(walSize(file)).toBe(0);
    expect(stringsInDataFiles(dir, [SECRET])).toEqual([]);
  });

  it("a closed database: the try fails quietly and no retry is left", async () => {
    const { db } = await removedContent();
    const wal = new WalTruncation(db);
    await db.destroy();
    expect(await wal.run()).toBe(false);
    expect(wal.pending).toBe(false);
  });
});
