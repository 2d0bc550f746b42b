import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logLines } from "../helpers/log-lines.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Account secrets (issue 31): write-only through the API. Every value here is random and
// long enough that finding it anywhere (a body, a log line, an event) can only be a leak.

let app: TestApp;
let acct: TestAccount;
const log = logLines();

beforeAll(async () => {
  // Everything the service logs, at every level: a value must reach none of it.
  app = await startTestApp({}, {}, pino({ level: "trace" }, log.destination));
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

const valueOf = () => "sv_" + randomBytes(24).toString("hex");
const put = (body: unknown, key = acct.key) => app.request("POST", "/v1/secrets", { key, body });
const list = (key = acct.key, query = "") => app.request("GET", `/v1/secrets${query}`, { key });
const remove = (name: string, key = acct.key) => app.request("DELETE", `/v1/secrets/${encodeURIComponent(name)}`, { key });
const fieldsOf = (res: ApiResponse) => errorOf(res).details.fields.map((f: { field: string }) => f.field);
/** Every value this file stored: none may appear in any answer or log line. */
const stored: string[] = [];
const putNew = async (name: string, key = acct.key) => {
  const value = valueOf();
  stored.push(value);
  return { value, res: await put({ name, value }, key) };
};
const expectNoValue = (text: string) => {
  for (const value of stored) expect(text).not.toContain(value);
};

describe("POST /v1/secrets", () => {
  it("creates a secret (201) and answers its name and times, never its value", async () => {
    const { value, res } = await putNew("ORDER_API_KEY");
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["created_at", "name", "object", "updated_at"]);
    expect(res.body).toMatchObject({ object: "secret", name: "ORDER_API_KEY" });
    expect(res.body.updated_at).toBe(res.body.created_at);
    expectNoValue(JSON.stringify(res.body));
    const row = await app.parley.services.db.selectFrom("secrets").selectAll().where("account_id", "=", acct.id).where("name", "=", "ORDER_API_KEY").executeTakeFirst();
    expect(row).toMatchObject({ value, created_at: res.body.created_at });
  });

  it("replaces the value of an existing name (200): created_at stays, updated_at moves on", async () => {
    const first = await putNew("REPLACED");
    const second = await putNew("REPLACED");
    expect(second.res.status).toBe(200);
    expect(second.res.body.created_at).toBe(first.res.body.created_at);
    expect(second.res.body.updated_at > first.res.body.updated_at).toBe(true);
    expect(Object.keys(second.res.body).sort()).toEqual(["created_at", "name", "object", "updated_at"]);
    const values = await app.parley.services.secrets.resolve(acct.id, ["REPLACED"]);
    expect(values.get("REPLACED")).toBe(second.value);
  });

  it("refuses bad names, bad values and unknown fields with 400 naming the field, quoting no value", async () => {
    const good = valueOf();
    stored.push(good);
    for (const name of ["", "1ABC", "A-B", "A B", "ä", "A".repeat(65), 7, null]) {
      const res = await put({ name, value: good });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(errorOf(res).code).toBe("invalid_request");
      expect(fieldsOf(res)).toEqual(["name"]);
    }
    expect((await put({ name: "_" + "A".repeat(63), value: good })).status).toBe(201);

    const tooLong = good.repeat(Math.ceil(4097 / good.length)).slice(0, 4097);
    for (const value of ["", tooLong, 12345, null, ["x"]]) {
      const res = await put({ name: "VALUE_CHECK", value });
      expect(res.status).toBe(400);
      expect(fieldsOf(res)).toEqual(["value"]);
      expectNoValue(JSON.stringify(res.body));
    }
    expect((await put({ name: "VALUE_CHECK", value: tooLong.slice(0, 4096) })).status).toBe(201);

    const missing = await put({ name: "NO_VALUE" });
    expect(missing.status).toBe(400);
    expect(fieldsOf(missing)).toEqual(["value"]);

    const extra = await put({ name: "EXTRA", value: good, description: "x" });
    expect(extra.status).toBe(400);
    expect(fieldsOf(extra)).toEqual(["description"]);
    expect(errorOf(extra).message).toBe("description: unknown field");
    expectNoValue(JSON.stringify(extra.body));
    expect((await app.parley.services.secrets.resolve(acct.id, ["NO_VALUE", "EXTRA"])).size).toBe(0);
  });
});

describe("GET /v1/secrets", () => {
  it("lists names and times, no value anywhere in the JSON, paginated like every list", async () => {
    const other = await app.account();
    for (const name of ["LIST_A", "LIST_B", "LIST_C"]) expect((await putNew(name, other.key)).res.status).toBe(201);
    const res = await list(other.key);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["data", "has_more", "next_cursor", "total"]);
    expect(res.body).toMatchObject({ has_more: false, next_cursor: null, total: 3 });
    // Newest first; created in one millisecond, by name, descending too.
    expect(res.body.data.map((s: { name: string }) => s.name)).toEqual(["LIST_C", "LIST_B", "LIST_A"]);
    for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(["created_at", "name", "object", "updated_at"]);
    expectNoValue(JSON.stringify(res.body));

    // One at a time, oldest first: every name once, then the end.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: ApiResponse = await list(other.key, `?limit=1&order=asc${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(3);
      expect(page.body.data).toHaveLength(1);
      seen.push(page.body.data[0].name);
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
      expectNoValue(JSON.stringify(page.body));
    } while (cursor !== null);
    expect(seen.sort()).toEqual(["LIST_A", "LIST_B", "LIST_C"]);

    // A cursor is bound to its list: the webhook list refuses it.
    const first = await list(other.key, "?limit=1");
    const foreign = await app.request("GET", `/v1/webhooks?cursor=${encodeURIComponent(first.body.next_cursor)}`, { key: other.key });
    expect(errorOf(foreign).code).toBe("invalid_cursor");
    expect((await list(other.key, "?limit=0")).status).toBe(400);
    expect(fieldsOf(await list(other.key, "?value=1"))).toEqual(["value"]);
  });
});

describe("DELETE /v1/secrets/{name}", () => {
  it("deletes (200, as other deletes answer), then 404 secret_not_found", async () => {
    await putNew("GONE");
    const res = await remove("GONE");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: "GONE", deleted: true });
    expect((await app.parley.services.secrets.resolve(acct.id, ["GONE"])).size).toBe(0);
    const again = await remove("GONE");
    expect(again.status).toBe(404);
    expect(errorOf(again).code).toBe("secret_not_found");
    expect((await list()).body.data.some((s: { name: string }) => s.name === "GONE")).toBe(false);
    const bad = await remove("A-B");
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad)).toEqual(["name"]);
  });
});

describe("limits", () => {
  it("refuses the 101st secret with 409 secret_limit_reached; replacing one at the limit still works", async () => {
    const full = await app.account();
    for (let i = 0; i < 100; i++) expect((await put({ name: `S${i}`, value: `v${i}` }, full.key)).status).toBe(201);
    const refused = await put({ name: "S100", value: "v" }, full.key);
    expect(refused.status).toBe(409);
    expect(errorOf(refused).code).toBe("secret_limit_reached");
    expect(errorOf(refused).message).toContain("100");
    expect((await put({ name: "S0", value: "replaced" }, full.key)).status).toBe(200);
    expect((await list(full.key, "?limit=1")).body.total).toBe(100);
    expect((await remove("S1", full.key)).status).toBe(200);
    expect((await put({ name: "S100", value: "v" }, full.key)).status).toBe(201);
  });
});

describe("accounts and permissions", () => {
  it("another account neither sees nor deletes them, and its own of the same name is its own", async () => {
    const { value } = await putNew("SHARED_NAME");
    const other = await app.account();
    const seen = await list(other.key);
    expect(seen.body.data).toEqual([]);
    const deleted = await remove("SHARED_NAME", other.key);
    expect(deleted.status).toBe(404);
    expect(errorOf(deleted).code).toBe("secret_not_found");
    const own = await putNew("SHARED_NAME", other.key);
    expect(own.res.status).toBe(201);
    expect((await app.parley.services.secrets.resolve(acct.id, ["SHARED_NAME"])).get("SHARED_NAME")).toBe(value);
    expect((await app.parley.services.secrets.resolve(other.id, ["SHARED_NAME"])).get("SHARED_NAME")).toBe(own.value);
  });

  it("needs secrets:write to write and delete, secrets:read to list", async () => {
    await putNew("GATED");
    const reader = await app.key(acct.id, ["secrets:read"]);
    const unrelated = await app.key(acct.id, ["webhooks:write", "agents:write", "account:read"]);
    expect((await list(reader)).status).toBe(200);
    for (const res of [await put({ name: "GATED", value: "x" }, reader), await remove("GATED", reader), await list(unrelated), await put({ name: "X", value: "x" }, unrelated)]) {
      expect(res.status).toBe(403);
      expect(errorOf(res).code).toBe("forbidden");
    }
    const writer = await app.key(acct.id, ["secrets:write"]);
    expect((await list(writer)).status).toBe(200);
    expect((await put({ name: "GATED", value: valueOf() }, writer)).status).toBe(200);
  });
});

describe("resolve", () => {
  it("returns only the asked names the account has", async () => {
    const a = await app.account();
    const b = await app.account();
    const one = await putNew("ONE", a.key);
    const two = await putNew("TWO", a.key);
    await putNew("THREE", a.key);
    await putNew("MISSING_IN_A", b.key);
    const values = await app.parley.services.secrets.resolve(a.id, ["ONE", "TWO", "MISSING_IN_A", "NOPE", "ONE"]);
    expect([...values.entries()].sort()).toEqual([
      ["ONE", one.value],
      ["TWO", two.value],
    ]);
    expect((await app.parley.services.secrets.resolve(a.id, [])).size).toBe(0);
  });
});

describe("where a value must not go", () => {
  it("is in no event, no OpenAPI response schema and no log line", async () => {
    const events = await app.parley.services.db.selectFrom("events").selectAll().execute();
    expectNoValue(JSON.stringify(events));

    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    const post = doc.paths["/v1/secrets"].post;
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["200", "201", "409"]));
    for (const status of ["200", "201"]) expect(JSON.stringify(post.responses[status])).not.toContain('"value"');
    expect(JSON.stringify(doc.paths["/v1/secrets"].get.responses["200"])).not.toContain('"value"');
    expect(doc.paths["/v1/secrets/{name}"].delete).toBeDefined();

    // The requests above were logged (one line each); none of the values was.
    await new Promise((resolve) => setImmediate(resolve));
    expect(log.lines.some((line) => line.route === "/v1/secrets" && line.method === "POST")).toBe(true);
    expect(stored.length).toBeGreaterThan(10);
    expectNoValue(JSON.stringify(log.lines));
  });
});
