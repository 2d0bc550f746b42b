import SQLite from "better-sqlite3";
import { Kysely, SqliteDialect, sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { QueryShapes } from "../../../src/db/query-shapes.js";
import type { Db } from "../../../src/db/database.js";

// A query compiled once per shape must answer exactly what building it afresh answers, for
// every run's values, and refuse a builder that does not pass a value to Kysely as a value.

interface T {
  items: { id: string; account_id: string; status: string; name: string; created_at: string };
}

const opened: Array<Kysely<T>> = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.destroy();
});

function database(): Kysely<T> {
  const sqlite = new SQLite(":memory:");
  sqlite.exec(`CREATE TABLE items (id TEXT, account_id TEXT, status TEXT, name TEXT, created_at TEXT);
    INSERT INTO items VALUES ('i1', 'a', 'active', 'one', '1'), ('i2', 'a', 'paused', 'two', '2'), ('i3', 'b', 'active', 'three', '3'),
      ('i4', 'a', 'active', 'four', '4'), ('i5', 'b', 'paused', 'five', '5');`);
  const db = new Kysely<T>({ dialect: new SqliteDialect({ database: sqlite }) });
  opened.push(db);
  return db;
}

type Values = { account: string; status?: string | undefined; pattern?: string | undefined; limit: number };

function build(db: Kysely<T>, v: Values) {
  let q = db.selectFrom("items").select(["id", "name"]).where("account_id", "=", v.account);
  if (v.status) q = q.where("status", "=", v.status);
  if (v.pattern) q = q.where(sql<boolean>`name LIKE ${v.pattern}`);
  return q.orderBy("created_at", "desc").limit(v.limit);
}

describe("QueryShapes", () => {
  it("answers what the query built afresh answers, whatever values and shapes follow one another", async () => {
    const db = database();
    const shapes = new QueryShapes();
    const runs: Values[] = [
      { account: "a", limit: 10 },
      { account: "b", limit: 10 },
      { account: "a", status: "active", limit: 1 },
      { account: "b", status: "paused", limit: 5 },
      { account: "a", status: undefined, pattern: "%o%", limit: 3 },
      { account: "a", status: "", limit: 2 }, // unset, as `if (v.status)` takes it
      { account: "a", status: "active", pattern: "f%", limit: 9 },
      { account: "b", status: "active", pattern: "t%", limit: 9 },
      { account: "a", limit: 1 },
    ];
    for (const v of runs) {
      const expected = await build(db, v).execute();
      const got = await shapes.rows(db as unknown as Db, "items", v, (slots) => build(db, slots));
      expect(got, JSON.stringify(v)).toEqual(expected);
    }
    // The runs above hit the shapes compiled earlier: account "b" with the shape "a" compiled first.
    expect((await shapes.rows(db as unknown as Db, "items", { account: "b", limit: 10 }, (slots) => build(db, slots))).map((r) => r.id)).toEqual(["i5", "i3"]);
  });

  it("refuses a builder that turns a value into SQL text instead of binding it", async () => {
    const db = database();
    const shapes = new QueryShapes();
    const inlined = (v: Values) => db.selectFrom("items").select("id").where(sql<boolean>`name LIKE ${sql.lit(`${v.pattern}`)}`).where("account_id", "=", v.account);
    await expect(shapes.rows(db as unknown as Db, "bad", { account: "a", pattern: "%o%", limit: 1 }, inlined)).rejects.toThrow("query shape bad: pattern, limit not bound as values");
  });
});
