import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { withStatementCache } from "../../../src/db/statement-cache.js";

// Reading statements fetch rows as arrays and make the objects themselves: the rows must be
// exactly the objects better-sqlite3 makes, and follow the schema when it changes.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fileDatabase(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "parley-statements-"));
  dirs.push(dir);
  return path.join(dir, "test.db");
}

describe("withStatementCache", () => {
  it("gives the same rows as better-sqlite3: types, nulls, blobs, and the last of two same-named columns", () => {
    const plain = new SQLite(":memory:");
    plain.exec(`CREATE TABLE a (id TEXT, n INTEGER, r REAL, t TEXT, b BLOB);
      CREATE TABLE c (id TEXT, a_id TEXT, label TEXT);
      INSERT INTO a VALUES ('a1', 42, 1.5, 'héllo', x'00ff'), ('a2', NULL, NULL, NULL, NULL);
      INSERT INTO c VALUES ('c1', 'a1', 'first'), ('c2', 'a2', NULL);`);
    const cached = withStatementCache(plain);
    for (const sql of ["SELECT * FROM a ORDER BY id", "SELECT * FROM a JOIN c ON c.a_id = a.id ORDER BY a.id", "SELECT count(*) AS n, max(r) FROM a WHERE id = ?"]) {
      const params = sql.includes("?") ? ["a1"] : [];
      const expected = plain.prepare(sql).all(params);
      expect(cached.prepare(sql).all(params)).toEqual(expected);
      expect([...cached.prepare(sql).iterate(params)]).toEqual(expected);
      // Reused from the cache: still the same.
      expect(cached.prepare(sql).all(params)).toEqual(expected);
    }
    const joined = cached.prepare("SELECT * FROM a JOIN c ON c.a_id = a.id ORDER BY a.id").all([]) as Array<Record<string, unknown>>;
    expect(joined[0]!.id).toBe("c1");
  });

  it("writes through statements that return nothing", () => {
    const cached = withStatementCache(new SQLite(":memory:"));
    cached.prepare("CREATE TABLE t (x INTEGER)").run([]);
    expect(cached.prepare("INSERT INTO t VALUES (?), (?)").run([1, 2]).changes).toBe(2);
    expect(cached.prepare("INSERT INTO t VALUES (?) RETURNING x").all([3])).toEqual([{ x: 3 }]);
    expect(cached.prepare("SELECT sum(x) AS s FROM t").all([])).toEqual([{ s: 6 }]);
  });

  it("makes rows for any column names, those that would be code or break a string literal included", () => {
    const plain = new SQLite(":memory:");
    const names = [`a"; throw new Error("ran"); "`, "x\\y", "line\nbreak", "sep\u2028arator", "1", "constructor", "", "é", "values"];
    const sql = `SELECT ${names.map((name, i) => `${i} AS "${name.replace(/"/g, '""')}"`).join(", ")}`;
    const [row] = withStatementCache(plain).prepare(sql).all([]) as Array<Record<string, unknown>>;
    expect(row).toEqual(plain.prepare(sql).all([])[0]);
    expect(Object.keys(row!).sort()).toEqual([...names].sort());
  });

  it("leaves a row with a column named __proto__ to better-sqlite3, whose objects never take it as their prototype", () => {
    const plain = new SQLite(":memory:");
    const sql = `SELECT 'x' AS "__proto__", 1 AS "constructor"`;
    const [row] = withStatementCache(plain).prepare(sql).all([]) as Array<Record<string, unknown>>;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row!.constructor).toBe(1);
    expect(row).toEqual(plain.prepare(sql).all([])[0]);
  });

  it("follows a column added by this connection or by another one", () => {
    const file = fileDatabase();
    const cached = withStatementCache(new SQLite(file));
    cached.prepare("CREATE TABLE t (x INTEGER)").run([]);
    cached.prepare("INSERT INTO t VALUES (1)").run([]);
    expect(cached.prepare("SELECT * FROM t").all([])).toEqual([{ x: 1 }]);
    cached.prepare("ALTER TABLE t ADD COLUMN y TEXT DEFAULT 'mine'").run([]);
    expect(cached.prepare("SELECT * FROM t").all([])).toEqual([{ x: 1, y: "mine" }]);

    const other = new SQLite(file);
    other.exec("ALTER TABLE t ADD COLUMN z TEXT DEFAULT 'theirs'");
    other.close();
    expect(cached.prepare("SELECT * FROM t").all([])).toEqual([{ x: 1, y: "mine", z: "theirs" }]);
    cached.close();
  });
});
