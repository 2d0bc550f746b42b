import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

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
