import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
});
afterAll(async () => {
  await app.close();
});

/** Sends `request` as written on a new connection and reads until the server closes it. */
/**
 * Writes `request` as it is and reads the answer until the server closes (the request says
 * `Connection: close`). The socket stays open for writing: Node's server drops a request whose
 * client half-closes before the answer is ready, which a database that answers asynchronously
 * (PostgreSQL) would meet.
 */
function rawHttp(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    socket.setEncoding("utf8").on("data", (d: string) => (answer += d)).on("end", () => resolve(answer)).on("error", reject);
  });
}

describe("API keys", () => {
  it("refuses a missing, malformed or unknown key with 401 invalid_api_key", async () => {
    const missing = await app.request("GET", "/v1/agents");
    expect(missing.status).toBe(401);
    expect(errorOf(missing).code).toBe("invalid_api_key");
    const malformed = await app.request("GET", "/v1/agents", { headers: { authorization: "Basic abc" } });
    expect(malformed.status).toBe(401);
    const unknown = await app.request("GET", "/v1/agents", { key: "sk_parley_notarealkey" });
    expect(unknown.status).toBe(401);
    expect(errorOf(unknown).code).toBe("invalid_api_key");
  });

  it("refuses a revoked key", async () => {
    const { id, key } = await app.parley.services.apiKeys.create(acct.id, "to revoke", ["*"]);
    expect((await app.request("GET", "/v1/agents", { key })).status).toBe(200);
    await app.parley.services.apiKeys.revoke(id);
    const res = await app.request("GET", "/v1/agents", { key });
    expect(res.status).toBe(401);
    expect(errorOf(res).message).toMatch(/revoked/);
  });

  it("stores only a hash of each key", async () => {
    const { key } = await app.parley.services.apiKeys.create(acct.id, "hashed", ["*"]);
    const rows = await app.parley.services.db.selectFrom("api_keys").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(JSON.stringify(rows)).not.toContain(key.slice(-20));
  });

  it("refuses an operation the key has no permission for with 403 forbidden", async () => {
    const readOnly = await app.key(acct.id, ["agents:read"]);
    expect((await app.request("GET", "/v1/agents", { key: readOnly })).status).toBe(200);
    const write = await app.request("POST", "/v1/agents", { key: readOnly, body: { name: "x", system_prompt: "y", voice_id: "flite-rms" } });
    expect(write.status).toBe(403);
    expect(errorOf(write).code).toBe("forbidden");
    expect(errorOf(write).message).toContain("agents:write");
    const account = await app.request("GET", "/v1/account", { key: readOnly });
    expect(account.status).toBe(403);

    const writer = await app.key(acct.id, ["agents:write"]);
    expect((await app.request("GET", "/v1/agents", { key: writer })).status).toBe(200);
  });
});

describe("request ids, unknown routes, health", () => {
  it("gives every response an X-Request-Id, echoed in error bodies", async () => {
    const ok = await app.request("GET", "/v1/agents", { key: acct.key });
    expect(ok.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{20}$/);
    const err = await app.request("GET", "/v1/agents/agent_nope", { key: acct.key });
    expect(err.body.meta.request_id).toBe(err.headers.get("x-request-id"));
    const again = await app.request("GET", "/v1/agents", { key: acct.key });
    expect(again.headers.get("x-request-id")).not.toBe(ok.headers.get("x-request-id"));
  });

  it("answers unknown routes with 404 not_found and wrong methods with 405, in the envelope", async () => {
    const res = await app.request("GET", "/v1/widgets", { key: acct.key });
    expect(res.status).toBe(404);
    expect(errorOf(res).code).toBe("not_found");
    expect(res.body.meta.request_id).toMatch(/^req_/);
    const wrong = await app.request("PUT", "/v1/agents", { key: acct.key });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toContain("POST");
  });

  it("answers HEAD as GET without a body, OPTIONS with the path's methods, a trailing slash and an absolute-form target as the path", async () => {
    const get = await fetch(`${app.baseUrl}/v1/agents`, { headers: { authorization: `Bearer ${acct.key}` } });
    const head = await fetch(`${app.baseUrl}/v1/agents`, { method: "HEAD", headers: { authorization: `Bearer ${acct.key}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(head.headers.get("x-request-id")).toMatch(/^req_/);
    expect(await head.text()).toBe("");
    const options = await fetch(`${app.baseUrl}/v1/agents/agent_x`, { method: "OPTIONS" });
    expect(options.status).toBe(200);
    expect(options.headers.get("allow")).toBe("DELETE, GET, HEAD, PATCH");
    expect((await app.request("GET", "/v1/agents/", { key: acct.key })).body.data).toEqual(expect.any(Array));
    // A proxy's form of the request line (RFC 9112 section 3.2.2): the route is its path.
    const port = new URL(app.baseUrl).port;
    const raw = await rawHttp(Number(port), `GET http://127.0.0.1:${port}/v1/agents?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${acct.key}\r\nConnection: close\r\n\r\n`);
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
    expect(raw).toContain('"data":[');
  });

  it("refuses a path whose percent-encoding does not decode with 400 invalid_request on (path), not a 500", async () => {
    for (const segment of ["%zz", "%E0%A4%A", "%ED%A0%80", "%C0%AF", "%"]) {
      for (const path of [`/v1/agents/${segment}`, `/v1/webhooks/${segment}/deliveries/dlv_x`, `/v1/calls/${segment}/recording`]) {
        const res = await app.request("GET", path, { key: acct.key });
        expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(400);
        const error = errorOf(res);
        expect(error.code).toBe("invalid_request");
        expect(error.message).toBe(`(path): the segment '${segment}' is not valid percent-encoded UTF-8`);
        expect(error.details.fields).toEqual([{ field: "(path)", message: `the segment '${segment}' is not valid percent-encoded UTF-8` }]);
      }
    }
    // An escape that decodes, even to a slash, is a path parameter like any other.
    expect((await app.request("GET", "/v1/agents/a%2Fb%C3%A9", { key: acct.key })).status).toBe(404);
  });

  it("serves /healthz and /readyz without a key", async () => {
    expect((await app.request("GET", "/healthz")).body).toEqual({ status: "ok" });
    const ready = await app.request("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe("ready");
  });
});

describe("GET /v1/account and /v1/account/ledger", () => {
  it("shows plan, balance, limits, usage and the signing secret", async () => {
    const a = await app.account({ plan: "agency", credits: 250 });
    await app.request("POST", "/v1/agents", { key: a.key, body: { name: "x", system_prompt: "y", voice_id: "flite-rms" } });
    const res = await app.request("GET", "/v1/account", { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: a.id,
      plan: "agency",
      credit_balance: 250,
      limits: { requests_per_minute: 1000, agents: 250, webhooks: 50, concurrent_calls: 50, queued_calls: 1000 },
      usage: { agents: 1, webhooks: 0, concurrent_calls: 0, queued_calls: 0 },
    });
    expect(res.body.signing_secret).toMatch(/^whsec_/);
    // A new account has no media token until it makes one (see media-token.test.ts).
    expect(res.body).toMatchObject({ media_token_set: false, media_token_created_at: null });
  });

  it("lists credit movements with running balances", async () => {
    const a = await app.account({ credits: 50 });
    await app.parley.services.accounts.addCredits(a.id, 25, "top-up");
    await app.parley.services.accounts.addCredits(a.id, -5, "correction");
    const res = await app.request("GET", "/v1/account/ledger?order=asc", { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.data.map((e: { amount: number; balance_after: number; reason: string }) => [e.amount, e.balance_after, e.reason])).toEqual([
      [50, 50, "grant"],
      [25, 75, "grant"],
      [-5, 70, "adjustment"],
    ]);
    const account = await app.request("GET", "/v1/account", { key: a.key });
    expect(account.body.credit_balance).toBe(70);
  });
});

describe("GET /v1/voices", () => {
  it("lists the embedded Flite voices in the list envelope", async () => {
    const res = await app.request("GET", "/v1/voices", { key: acct.key });
    expect(res.status).toBe(200);
    const ids = res.body.data.map((v: { id: string }) => v.id);
    expect(ids).toEqual(expect.arrayContaining(["flite-rms", "flite-slt", "flite-awb", "flite-kal16"]));
    expect(res.body.total).toBe(ids.length);
    expect(res.body.data[0]).toEqual({ id: expect.any(String), provider: "flite", name: expect.any(String), language: "en-US", gender: expect.any(String), sample_rate: expect.any(Number) });
  });
});

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document of every operation, served without a key", async () => {
    const res = await app.request("GET", "/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const create = res.body.paths["/v1/agents"].post;
    expect(create.requestBody.content["application/json"].schema.required).toEqual(expect.arrayContaining(["name", "voice_id"]));
    expect(create.responses["201"]).toBeDefined();
    expect(create.responses["402"].description).toContain("agent_limit_reached");
    expect(res.body.paths["/v1/agents/{agent_id}"].get.parameters.map((p: { name: string }) => p.name)).toEqual(["agent_id", "include"]);
    const listParams = res.body.paths["/v1/agents"].get.parameters;
    expect(listParams.find((p: { name: string }) => p.name === "limit").schema).toBeDefined();
  });
});
