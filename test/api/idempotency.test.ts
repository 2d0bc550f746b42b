import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Migrator, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest, openDatabase } from "../../src/db/database.js";
import { migrationProvider } from "../../src/db/migrations/index.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

let app: TestApp;
let acct: TestAccount;
const agent = { name: "Idem", system_prompt: "p", voice_id: "flite-rms" };

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

const post = (key: string, body: unknown, idem: string, apiKey = acct.key) =>
  app.request("POST", "/v1/agents", { key: apiKey, body, headers: { "Idempotency-Key": idem } });

describe("Idempotency-Key", () => {
  it("replays the stored response for the same key and body, creating one agent", async () => {
    const first = await post(acct.key, agent, "k-1");
    expect(first.status).toBe(201);
    const second = await post(acct.key, agent, "k-1");
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    const list = await app.request("GET", "/v1/agents?search=Idem", { key: acct.key });
    expect(list.body.total).toBe(1);
  });

  it("answers 409 idempotency_key_conflict for the same key with another body", async () => {
    await post(acct.key, agent, "k-2");
    const res = await post(acct.key, { ...agent, name: "Other" }, "k-2");
    expect(res.status).toBe(409);
    expect(errorOf(res).code).toBe("idempotency_key_conflict");
  });

  it("replays 4xx answers too, but not 429", async () => {
    const bad = { ...agent, voice_id: "nope" };
    const first = await post(acct.key, bad, "k-3");
    expect(first.status).toBe(400);
    const second = await post(acct.key, bad, "k-3");
    expect(second.status).toBe(400);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
  });

  it("keeps a key on a path too long for an index entry (by its digest), and only for that path", async () => {
    const long = (tail: string) => `/v1/webhooks/${"w".repeat(3000)}${tail}/test`;
    const send = (path: string) => app.request("POST", path, { key: acct.key, headers: { "Idempotency-Key": "k-long" } });
    const first = await send(long("a"));
    expect(first.status).toBe(404);
    const again = await send(long("a"));
    expect(again.status).toBe(404);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // Another long path with the same key is another scope.
    expect((await send(long("b"))).headers.get("idempotent-replayed")).toBeNull();
  });

  it("scopes keys to the account", async () => {
    const other = await app.account();
    await post(acct.key, agent, "shared-key");
    const res = await post(other.key, { ...agent, name: "Theirs" }, "shared-key", other.key);
    expect(res.status).toBe(201);
    expect(res.body.name).toBe("Theirs");
  });

  it("answers 409 idempotency_key_in_use while the first request is still running", async () => {
    const { db } = app.parley.services;
    await db
      .insertInto("idempotency_keys")
      .values({ account_id: acct.id, method: "POST", path: "/v1/agents", idempotency_key: "k-running", body_hash: createHash("sha256").update(JSON.stringify(agent)).digest("hex"), state: "running", status_code: null, response_body: null, created_at: new Date().toISOString() })
      .execute();
    const res = await post(acct.key, agent, "k-running");
    expect(res.status).toBe(409);
    expect(errorOf(res).code).toBe("idempotency_key_in_use");
  });

  it("forgets keys after 24 hours", async () => {
    await post(acct.key, agent, "k-old");
    await app.parley.services.db
      .updateTable("idempotency_keys")
      .set({ created_at: new Date(Date.now() - 25 * 3600_000).toISOString() })
      .where("idempotency_key", "=", "k-old")
      .execute();
    const res = await post(acct.key, { ...agent, name: "Fresh" }, "k-old");
    expect(res.status).toBe(201);
    expect(res.body.name).toBe("Fresh");
  });

  it("refuses an invalid key", async () => {
    const res = await post(acct.key, agent, "x".repeat(300));
    expect(res.status).toBe(400);
    expect(errorOf(res).details.fields[0].field).toBe("Idempotency-Key");
  });
});

describe("Idempotency-Key on a response with a secret", () => {
  const onExit: Array<() => Promise<void>> = [];
  afterAll(async () => {
    await Promise.all(onExit.map((close) => close()));
  });
  /** Every byte the database holds on disk now: the file and its write-ahead log. */
  const databaseBytes = () =>
    Buffer.concat(["parley.db", "parley.db-wal"].map((f) => path.join(app.dataDir, f)).filter((f) => existsSync(f)).map((f) => readFileSync(f)));
  const storedRows = async (accountId: string) => JSON.stringify(await app.parley.services.db.selectFrom("idempotency_keys").selectAll().where("account_id", "=", accountId).execute());

  it("POST /v1/calls/web: the token is in no database file; the same API key's retry gets the identical body, another key of the account 409 without it", async () => {
    const owner = await app.account();
    const agentId = (await app.request("POST", "/v1/agents", { key: owner.key, body: agent })).body.id as string;
    const send = (apiKey: string) => app.request("POST", "/v1/calls/web", { key: apiKey, body: { agent_id: agentId }, headers: { "Idempotency-Key": "web-1" } });
    const first = await send(owner.key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const token = first.body.token as string;
    expect(first.body.websocket_url).toContain(token);

    const stored = await storedRows(owner.id);
    expect(stored).toContain(first.body.call_id);
    expect(stored).not.toContain(token);
    // The files themselves: SQLite's (PostgreSQL's are the server's; the rows above are what it keeps).
    if (!app.onPostgres) {
      expect(databaseBytes().includes(token)).toBe(false);
      await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(app.parley.services.db);
      expect(databaseBytes().includes(token)).toBe(false);
    }

    const again = await send(owner.key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));

    const otherKey = await app.key(owner.id, ["calls:write"]);
    const other = await send(otherKey);
    expect(other.status).toBe(409);
    expect(errorOf(other).code).toBe("idempotency_key_conflict");
    expect(errorOf(other).message).toMatch(/another API key/);
    expect(JSON.stringify(other.body)).not.toContain(token);
    // Still one token issued, and the first key's retry still works.
    expect(JSON.stringify((await send(owner.key)).body)).toBe(JSON.stringify(first.body));
  });

  it("POST /v1/webhooks: the signing secret is not in the stored response; the same API key's retry gets it, another key 409", async () => {
    const owner = await app.account();
    const receiver = await startWebhookReceiver();
    onExit.push(() => receiver.close());
    const body = { url: receiver.url, events: ["*"] };
    const send = (apiKey: string) => app.request("POST", "/v1/webhooks", { key: apiKey, body, headers: { "Idempotency-Key": "hook-1" } });
    const first = await send(owner.key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const secret = first.body.secret as string;
    expect(secret.length).toBeGreaterThan(20);

    const stored = await storedRows(owner.id);
    expect(stored).toContain(first.body.id);
    expect(stored).not.toContain(secret);

    const again = await send(owner.key);
    expect(again.status).toBe(201);
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));

    const other = await send(await app.key(owner.id, ["webhooks:write"]));
    expect(other.status).toBe(409);
    expect(errorOf(other).code).toBe("idempotency_key_conflict");
    expect(JSON.stringify(other.body)).not.toContain(secret);
    expect((await app.request("GET", "/v1/webhooks", { key: owner.key })).body.total).toBe(1);
  });

  it("an upgrade deletes the responses older versions stored with a secret in them, and keeps the others", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-db-")), "parley.db");
    const old = openDatabase(file);
    expect((await new Migrator({ db: old, provider: migrationProvider }).migrateTo("015-call-counts")).error).toBeUndefined();
    const row = (p: string, key: string, status: number, body: unknown) =>
      sql`INSERT INTO idempotency_keys (account_id, method, path, idempotency_key, body_hash, state, status_code, response_body, created_at)
        VALUES ('acct_1', 'POST', ${p}, ${key}, 'h', 'done', ${status}, ${JSON.stringify(body)}, 't')`.execute(old);
    await row("/v1/calls/web", "a", 201, { call_id: "call_1", token: "wct_old_secret" });
    await row("/v1/webhooks/", "b", 201, { id: "wh_1", secret: "whsec_old_secret" });
    await row("/v1/webhooks", "c", 400, { error: { code: "invalid_url" } });
    await row("/v1/agents", "d", 201, { id: "agent_1" });
    await old.destroy();

    const db = openDatabase(file);
    await migrateToLatest(db);
    const left = await db.selectFrom("idempotency_keys").select(["idempotency_key", "sealed_secrets"]).orderBy("idempotency_key").execute();
    expect(left).toEqual([
      { idempotency_key: "c", sealed_secrets: null },
      { idempotency_key: "d", sealed_secrets: null },
    ]);
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
    await db.destroy();
    const bytes = readFileSync(file);
    expect(bytes.includes("wct_old_secret")).toBe(false);
    expect(bytes.includes("whsec_old_secret")).toBe(false);
  });
});
