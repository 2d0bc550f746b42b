import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// The media token opens /media/twilio calls on any agent of the account, so it is handled like
// an API key: stored hashed, shown once when made, and made only by keys that may place calls.

let app: TestApp;
let acct: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

const rotate = (key: string, headers: Record<string, string> = {}) => app.request("POST", "/v1/account/media-token/rotate", { key, headers });
const account = async (key: string) => (await app.request("GET", "/v1/account", { key })).body;

describe("the media token", () => {
  it("is not shown to a read-only key, which cannot rotate it either", async () => {
    const reader = await app.key(acct.id, ["account:read"]);
    const read = await app.request("GET", "/v1/account", { key: reader });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("media_token");
    expect(read.body.signing_secret).toBeNull();
    expect(read.body).toMatchObject({ media_token_set: false, media_token_created_at: null });

    const refused = await rotate(reader);
    expect(refused.status).toBe(403);
    expect(errorOf(refused).code).toBe("forbidden");
    expect(errorOf(refused).message).toContain("calls:write");
    expect((await account(reader)).media_token_set).toBe(false);
  });

  it("is made by a calls:write key, shown once, stored as a hash, and replaced by the next rotation", async () => {
    const caller = await app.key(acct.id, ["calls:write"]);
    const made = await rotate(caller);
    expect(made.status).toBe(200);
    expect(made.body).toEqual({ media_token: expect.stringMatching(/^mt_[0-9A-Za-z]{32}$/), media_token_created_at: expect.any(String) });
    const token: string = made.body.media_token;

    const reader = await app.key(acct.id, ["account:read"]);
    const shown = await account(reader);
    expect(shown).toMatchObject({ media_token_set: true, media_token_created_at: made.body.media_token_created_at });
    expect(JSON.stringify(shown)).not.toContain(token);
    expect(JSON.stringify(await account(acct.key))).not.toContain(token);

    const row = await app.parley.services.db.selectFrom("accounts").selectAll().where("id", "=", acct.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row.media_token_hash).toBe(createHash("sha256").update(token).digest("hex"));

    const next = await rotate(acct.key);
    expect(next.status).toBe(200);
    expect(next.body.media_token).not.toBe(token);
    expect(next.body.media_token_created_at > made.body.media_token_created_at).toBe(true);
    expect((await app.parley.services.accounts.findByMediaToken(token))).toBeUndefined();
    expect((await app.parley.services.accounts.findByMediaToken(next.body.media_token))?.id).toBe(acct.id);
  });

  it("is never kept for an Idempotency-Key replay: a repeated request rotates again", async () => {
    const who = await app.account();
    const headers = { "idempotency-key": "rotate-once" };
    const first = await rotate(who.key, headers);
    const again = await rotate(who.key, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(again.body.media_token).not.toBe(first.body.media_token);
    const stored = await app.parley.services.db.selectFrom("idempotency_keys").selectAll().where("account_id", "=", who.id).execute();
    expect(JSON.stringify(stored)).not.toContain(first.body.media_token);
    expect(JSON.stringify(stored)).not.toContain(again.body.media_token);
  });

  it("belongs to one account: another account's token opens nothing of this one", async () => {
    const other = await app.account();
    const theirs = (await rotate(other.key)).body.media_token;
    expect((await app.parley.services.accounts.findByMediaToken(theirs))?.id).toBe(other.id);
    expect(await app.parley.services.accounts.findByMediaToken("mt_" + "x".repeat(32))).toBeUndefined();
    expect(await app.parley.services.accounts.findByMediaToken("")).toBeUndefined();
  });
});

describe("the signing secret", () => {
  it("is shown only to keys that may manage webhooks", async () => {
    for (const [permissions, shown] of [
      [["account:read"], false],
      [["calls:write"], false],
      [["webhooks:read"], false],
      [["webhooks:write"], true],
      [["*"], true],
    ] as const) {
      const key = await app.key(acct.id, [...permissions, "account:read"]);
      const body = await account(key);
      expect(body, permissions.join()).toHaveProperty("signing_secret");
      if (shown) expect(body.signing_secret, permissions.join()).toMatch(/^whsec_/);
      else expect(body.signing_secret, permissions.join()).toBeNull();
    }
  });

  it("and the rotation are described in the OpenAPI document", async () => {
    const doc = (await app.request("GET", "/v1/openapi.json")).body;
    const rotation = doc.paths["/v1/account/media-token/rotate"].post;
    expect(rotation.responses["200"]).toBeDefined();
    expect(rotation.description ?? rotation.summary).toContain("calls:write");
    const accountSchema = doc.paths["/v1/account"].get.responses["200"].content["application/json"].schema;
    expect(Object.keys(accountSchema.properties)).toEqual(expect.arrayContaining(["media_token_set", "media_token_created_at", "signing_secret"]));
    expect(accountSchema.properties).not.toHaveProperty("media_token");
  });
});
