import type { CompiledQuery } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import { AgentsRepository } from "../../src/db/repositories/agents.js";
import { CallsRepository, type CallFilters } from "../../src/db/repositories/calls.js";
import { PhoneNumbersRepository } from "../../src/db/repositories/phone-numbers.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// The agent and call lists read a page from their covering index alone (migration 013): a
// table row holds a prompt or a transcript that can spill onto overflow pages. SQLite's own
// plan for the queries the repositories run says which index it reads, and whether it is
// covering (no table row read). Each list's index also holds each row's list item (migration
// 014): the page's program reads the items and calls no JSON function.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app.close();
});

/** The repository's db, recording the SQL and values of every query run through it (list pages are run by db.executeQuery). */
function recording(db: Db): { db: Db; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const spy = new Proxy(db, {
    get(target, property) {
      if (property === "executeQuery") return (query: CompiledQuery) => (queries.push(query), target.executeQuery(query));
      const value = Reflect.get(target, property, target);
      // Kysely keeps its state in private fields: its methods must run on the real instance.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: spy, queries };
}

/** The JSON functions the query's program calls (EXPLAIN's Function opcodes name them in p4, e.g. "json_object(20)"). */
async function jsonFunctionsCalled(db: Db, query: CompiledQuery): Promise<string[]> {
  const rows = await db.executeQuery<{ opcode: string; p4: unknown }>({ ...query, sql: `EXPLAIN ${query.sql}` } as CompiledQuery);
  return rows.rows.filter((r) => /Func/.test(r.opcode) && /^json/.test(String(r.p4))).map((r) => String(r.p4));
}

async function plan(db: Db, query: CompiledQuery): Promise<string> {
  const rows = await db.executeQuery<{ detail: string }>({ ...query, sql: `EXPLAIN QUERY PLAN ${query.sql}` } as CompiledQuery);
  return rows.rows.map((r) => r.detail).join("; ");
}

/**
 * Each of `queries` (descending pages, every second one after a cursor) reads `index` alone,
 * from the account's entries on, a page after a cursor as one range from it, and takes each
 * item from the index (no JSON function called).
 */
async function expectPagesReadFromIndex(queries: CompiledQuery[], table: string, index: string): Promise<void> {
  for (const [i, query] of queries.entries()) {
    const detail = await plan(app.parley.services.db, query);
    expect(detail).toMatch(new RegExp(`^SEARCH ${table} USING COVERING INDEX ${index} \\(account_id=\\?`));
    if (i % 2 === 1) expect(detail, "a page after a cursor is one range of the index").toMatch(/\(created_at,id\)<\(\?,\?\)/);
    expect(await jsonFunctionsCalled(app.parley.services.db, query), "each item is read from the index, not written by json_object at each read").toEqual([]);
    expect(query.sql, "the LIMIT is in the SQL (see literalLimit)").toMatch(/ limit 21$/);
  }
}

describe("list query plans", () => {
  it("an agent list page reads agents_list alone, items included, filtered or not, after a cursor or not", async () => {
    const { db, queries } = recording(app.parley.services.db);
    const agents = new AgentsRepository(db);
    const after = { createdAt: "2026-01-01T00:00:00.000Z", id: "agent_x" };
    for (const filters of [{}, { status: "active" as const }, { search: "desk" }]) {
      for (const cursor of [undefined, after]) await agents.page("acct_x", filters, { limit: 20, order: cursor ? "asc" : "desc", after: cursor });
    }
    expect(queries).toHaveLength(6);
    for (const [i, query] of queries.entries()) {
      // After a cursor, the page is one range of the index from the cursor on, however deep it is.
      const range = i % 2 === 0 ? "account_id=\\?\\)" : "account_id=\\? AND \\(created_at,id\\)>\\(\\?,\\?\\)\\)";
      expect(await plan(app.parley.services.db, query)).toMatch(new RegExp(`^SEARCH agents USING COVERING INDEX agents_list \\(${range}$`));
      expect(await jsonFunctionsCalled(app.parley.services.db, query), "each item is read from the index, not written by json_object at each read").toEqual([]);
      expect(query.sql, "the LIMIT is in the SQL (see literalLimit)").toMatch(/ limit 21$/);
    }
  });

  it("writes each page's LIMIT into its SQL, one statement per page size, never bound: SQLite compiles a statement with a bound LIMIT again at every run", async () => {
    const { db, queries } = recording(app.parley.services.db);
    const calls = new CallsRepository(db);
    for (const limit of [1, 20, 100, 20]) await calls.page("acct_x", {}, { limit, order: "desc" });
    expect(queries.map((q) => q.sql.match(/ limit (.+)$/)?.[1])).toEqual(["2", "21", "101", "21"]);
    expect(queries[3]!.sql).toBe(queries[1]!.sql);
    expect(queries.map((q) => q.parameters)).toEqual(Array(4).fill(["acct_x"]));
  });

  it("a call list page reads calls_list alone, items included, filtered by any of the list's filters or not, after a cursor or not", async () => {
    const { db, queries } = recording(app.parley.services.db);
    const calls = new CallsRepository(db);
    const after = { createdAt: "2026-01-01T00:00:00.000Z", id: "call_x" };
    const filters: CallFilters[] = [
      {},
      { status: "completed" },
      { outcome: "appointment_booked" },
      { agentId: "agent_x" },
      { phoneNumber: "+14155550100" },
      { direction: "inbound" },
      { createdFrom: "2026-01-01T00:00:00.000Z", createdBefore: "2026-02-01T00:00:00.000Z" },
      { status: "completed", agentId: "agent_x", direction: "outbound" },
    ];
    for (const f of filters) for (const cursor of [undefined, after]) await calls.page("acct_x", f, { limit: 20, order: "desc", after: cursor });
    expect(queries).toHaveLength(16);
    await expectPagesReadFromIndex(queries, "calls", "calls_list");
  });

  it("a phone number list page reads phone_numbers_list alone, items included, filtered or not, after a cursor or not", async () => {
    const { db, queries } = recording(app.parley.services.db);
    const numbers = new PhoneNumbersRepository(db);
    const after = { createdAt: "2026-01-01T00:00:00.000Z", id: "pn_x" };
    for (const filters of [{}, { status: "active" as const }, { country: "US" }]) {
      for (const cursor of [undefined, after]) await numbers.page("acct_x", filters, { limit: 20, order: "desc", after: cursor });
    }
    expect(queries).toHaveLength(6);
    await expectPagesReadFromIndex(queries, "phone_numbers", "phone_numbers_list");
  });
});
