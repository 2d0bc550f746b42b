import { Kysely, SqliteDialect } from "kysely";
import SQLite from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { literalLimit } from "../../../src/db/literal-limit.js";

describe("literalLimit", () => {
  const db = new Kysely<{ t: { n: number } }>({ dialect: new SqliteDialect({ database: new SQLite(":memory:") }) });

  it("writes a whole number into the SQL, with no parameter", () => {
    const query = db.selectFrom("t").select("n").limit(literalLimit(21)).compile();
    expect(query.sql).toBe('select "n" from "t" limit 21');
    expect(query.parameters).toEqual([]);
  });

  it("refuses anything else, which would be written into the SQL as it is", () => {
    for (const bad of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, "1; drop table t" as unknown as number]) {
      expect(() => literalLimit(bad), String(bad)).toThrow(RangeError);
    }
  });
});
