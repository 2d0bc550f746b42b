import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EVENT_NAMES, GUIDE_EVENTS, PARLEY_EVENTS, SUBSCRIPTION_EVENTS } from "../../src/services/event-names.js";
import { closedLoopbackPort, startLoopbackHttpServer, startSilentTcpServer } from "../helpers/loopback-peers.js";
import type { HostResolver } from "../../src/services/webhook-network-policy.js";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;

const minimal = { url: "https://hooks.example.com/parley", events: ["call.completed"] };
const WEBHOOK_FIELDS = ["created_at", "description", "events", "id", "metadata", "status", "updated_at", "url"];

beforeAll(async () => {
  // The URL probe has its own tests below; here no URL is dialled.
  app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0" });
  acct = await app.account();
  await app.parley.services.accounts.setLimits(acct.id, { webhooks: 1000 });
});
afterAll(async () => {
  await app.close();
});

const create = (body: unknown, key = acct.key, on = app) => on.request("POST", "/v1/webhooks", { key, body });
const fieldsOf = (res: ApiResponse) => errorOf(res).details.fields.map((f: { field: string }) => f.field);

async function storedRow(id: string) {
  return app.parley.services.db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst();
}

describe("POST /v1/webhooks", () => {
  it("creates an active webhook with a generated secret, shown only in this response", async () => {
    const res = await create(minimal);
    expect(res.status).toBe(201);
    const webhook = res.body;
    expect(webhook.id).toMatch(/^wh_[0-9A-Za-z]{20}$/);
    expect(webhook).toMatchObject({ url: minimal.url, events: ["call.completed"], description: null, status: "active", metadata: {} });
    expect(webhook.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    expect(Object.keys(webhook).sort()).toEqual([...WEBHOOK_FIELDS, "secret"].sort());
    expect(webhook.updated_at).toBe(webhook.created_at);
    expect((await storedRow(webhook.id))!.secret).toBe(webhook.secret);

    const read = await app.request("GET", `/v1/webhooks/${webhook.id}`, { key: acct.key });
    expect(read.status).toBe(200);
    const { secret: _secret, ...withoutSecret } = webhook;
    expect(read.body).toEqual(withoutSecret);
    const list = await app.request("GET", "/v1/webhooks", { key: acct.key });
    expect(list.body.data.every((w: object) => !("secret" in w))).toBe(true);
    const patched = await app.request("PATCH", `/v1/webhooks/${webhook.id}`, { key: acct.key, body: { description: "renamed" } });
    expect(patched.body).not.toHaveProperty("secret");
  });

  it("keeps a given secret, description and metadata, and generates distinct secrets", async () => {
    const secret = "my-own-secret-0123456789";
    const res = await create({ ...minimal, secret, description: "CRM sync", metadata: { team: "ops" } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ secret, description: "CRM sync", metadata: { team: "ops" } });
    const a = await create(minimal);
    const b = await create(minimal);
    expect(a.body.secret).not.toBe(b.body.secret);
  });

  it("accepts every name of both event lists and Parley's campaign events, and * alone", async () => {
    expect(new Set(EVENT_NAMES)).toEqual(new Set([...SUBSCRIPTION_EVENTS, ...GUIDE_EVENTS, ...PARLEY_EVENTS]));
    const all = await create({ ...minimal, events: [...EVENT_NAMES] });
    expect(all.status).toBe(201);
    // call.initiated is call.started under another name: listing both keeps the first.
    expect(all.body.events).toEqual(EVENT_NAMES.filter((n) => n !== "call.initiated"));
    const star = await create({ ...minimal, events: ["*"] });
    expect(star.body.events).toEqual(["*"]);
    const guide = await create({ ...minimal, events: ["call.initiated", "credits.low", "call.initiated", "call.started"] });
    expect(guide.body.events).toEqual(["call.initiated", "credits.low"]);
  });

  it("accepts http:// only for loopback hosts", async () => {
    for (const url of ["http://127.0.0.1:9/hook", "http://127.8.9.10/hook", "http://[::1]:8080/hook", "http://localhost:3000/hook", "https://127.0.0.1/hook"]) {
      const res = await create({ ...minimal, url });
      expect(res.status, url).toBe(201);
      expect(res.body.url).toBe(url);
    }
    // Names resolve to a public address here (nothing connects to it: the probe is off, and no event is sent).
    const strict = await startTestApp({}, { PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "0", PARLEY_WEBHOOK_VERIFY_URL: "0" }, undefined, { hostResolver: async () => [{ address: "93.184.216.34", family: 4 }] });
    try {
      const owner = await strict.account();
      const res = await create({ ...minimal, url: "http://127.0.0.1:9/hook" }, owner.key, strict);
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe("invalid_url");
      expect(errorOf(res).message).toContain("https://");
      expect((await create(minimal, owner.key, strict)).status).toBe(201);
    } finally {
      await strict.close();
    }
  });

  it.each([
    [{ ...minimal, url: "http://hooks.example.com/parley" }, "invalid_url", "url", "loopback"],
    [{ ...minimal, url: "http://192.168.1.10/hook" }, "invalid_url", "url", "loopback"],
    [{ ...minimal, url: "ftp://hooks.example.com/x" }, "invalid_url", "url", "https://"],
    [{ ...minimal, url: "hooks.example.com/parley" }, "invalid_url", "url", "absolute"],
    [{ ...minimal, url: "https://user:pw@hooks.example.com/" }, "invalid_url", "url", "password"],
    [{ ...minimal, url: "https://hooks.example.com/" + "x".repeat(2048) }, "invalid_url", "url", "2048"],
    [{ events: ["call.completed"] }, "invalid_url", "url", "required"],
    [{ ...minimal, events: [] }, "invalid_events", "events", "at least one"],
    [{ ...minimal, events: "call.completed" }, "invalid_events", "events", "array"],
    [{ ...minimal, events: ["call.completed", "call.exploded", "agent.hired"] }, "invalid_events", "events", "'call.exploded', 'agent.hired'"],
    [{ ...minimal, events: ["*", "call.completed"] }, "invalid_events", "events", "alone"],
    [{ url: minimal.url }, "invalid_events", "events", "required"],
    [{ ...minimal, secret: "too-short" }, "invalid_request", "secret", "16 to 256"],
    [{ ...minimal, secret: "s".repeat(257) }, "invalid_request", "secret", "16 to 256"],
    [{ ...minimal, description: "d".repeat(501) }, "invalid_request", "description", "500"],
    [{ ...minimal, metadata: ["a"] }, "invalid_request", "metadata", "object"],
    [{ ...minimal, status: "inactive" }, "invalid_request", "status", "unknown field"],
  ])("refuses %j with %s naming %s", async (body, code, field, says) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    const error = errorOf(res);
    expect(error.code).toBe(code);
    expect(fieldsOf(res)).toContain(field);
    expect(error.message).toContain(field);
    expect(error.message).toContain(says);
  });

  it("stops at the plan's webhook limit with 402 webhook_limit_reached, whatever the webhooks' status", async () => {
    const small = await app.account();
    await app.parley.services.accounts.setLimits(small.id, { webhooks: 2 });
    const first = await create(minimal, small.key);
    expect(first.status).toBe(201);
    await app.request("PATCH", `/v1/webhooks/${first.body.id}`, { key: small.key, body: { status: "inactive" } });
    expect((await create(minimal, small.key)).status).toBe(201);
    const third = await create(minimal, small.key);
    expect(third.status).toBe(402);
    expect(errorOf(third).code).toBe("webhook_limit_reached");
    expect(errorOf(third).message).toContain("2 webhooks");
    await app.request("DELETE", `/v1/webhooks/${first.body.id}`, { key: small.key });
    expect((await create(minimal, small.key)).status).toBe(201);
  });

  it("needs webhooks:write", async () => {
    const reader = await app.key(acct.id, ["webhooks:read"]);
    const res = await create(minimal, reader);
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe("forbidden");
    expect((await app.request("GET", "/v1/webhooks", { key: reader })).status).toBe(200);
    const agentsOnly = await app.key(acct.id, ["agents:write"]);
    expect(errorOf(await app.request("GET", "/v1/webhooks", { key: agentsOnly })).code).toBe("forbidden");
  });
});

describe("URL reachability check (verifyReachable)", () => {
  let probing: TestApp;
  let owner: TestAccount;

  beforeAll(async () => {
    probing = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "1", PARLEY_WEBHOOK_TIMEOUT_MS: "500" });
    owner = await probing.account();
  });
  afterAll(async () => {
    await probing.close();
  });

  it("stores a URL whose host accepts connections, without sending it a request", async () => {
    const receiver = await startLoopbackHttpServer();
    try {
      const res = await create({ ...minimal, url: receiver.url }, owner.key, probing);
      expect(res.status).toBe(201);
      await vi.waitFor(() => expect(receiver.connections).toBeGreaterThan(0));
      expect(receiver.requests).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it("refuses a URL nothing listens on with 400 url_unreachable, saying nothing about why", async () => {
    // Which failure it was (refused, timed out, TLS and its certificate's names) would map the network behind an address.
    const port = await closedLoopbackPort();
    const silent = await startSilentTcpServer();
    const plain = await startLoopbackHttpServer();
    try {
      const messages = new Set<string>();
      for (const url of [`http://127.0.0.1:${port}/hook`, `https://127.0.0.1:${silent.port}/hook`, plain.url.replace("http:", "https:")]) {
        const res = await create({ ...minimal, url }, (await probing.account()).key, probing);
        expect(res.status, url).toBe(400);
        expect(errorOf(res).code).toBe("url_unreachable");
        expect(fieldsOf(res)).toEqual(["url"]);
        messages.add(errorOf(res).message);
      }
      expect([...messages]).toEqual(["url: cannot be reached from this server"]);
    } finally {
      await silent.close();
      await plain.close();
    }
    const list = await probing.request("GET", "/v1/webhooks", { key: owner.key });
    expect(list.body.data.some((w: { url: string }) => w.url.includes(`:${port}/`))).toBe(false);
  });

  it("checks at most 10 URLs per account and minute (creation and update): 429 after, other accounts unaffected", async () => {
    const busy = await probing.account();
    const port = await closedLoopbackPort();
    for (let i = 0; i < 10; i++) expect(errorOf(await create({ ...minimal, url: `http://127.0.0.1:${port}/${i}` }, busy.key, probing)).code).toBe("url_unreachable");
    const limited = await create({ ...minimal, url: `http://127.0.0.1:${port}/11` }, busy.key, probing);
    expect(limited.status).toBe(429);
    expect(errorOf(limited).code).toBe("rate_limit_exceeded");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    const other = await probing.account();
    expect(errorOf(await create({ ...minimal, url: `http://127.0.0.1:${port}/x` }, other.key, probing)).code).toBe("url_unreachable");
  });

  it("probes a changed URL on update, and only a changed one", async () => {
    const receiver = await startLoopbackHttpServer();
    const created = await create({ ...minimal, url: receiver.url }, owner.key, probing);
    expect(created.status).toBe(201);
    await receiver.close();

    const port = await closedLoopbackPort();
    const moved = await probing.request("PATCH", `/v1/webhooks/${created.body.id}`, { key: owner.key, body: { url: `http://127.0.0.1:${port}/x` } });
    expect(moved.status).toBe(400);
    expect(errorOf(moved).code).toBe("url_unreachable");

    const same = await probing.request("PATCH", `/v1/webhooks/${created.body.id}`, { key: owner.key, body: { url: receiver.url, description: "unchanged url" } });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ url: receiver.url, description: "unchanged url" });
  });
});

describe("webhook URLs into the service's own networks", () => {
  // Names resolve through this table: nothing is looked up, and nothing connects (the probe is off).
  const table: Record<string, string> = { "internal.example": "10.0.0.5", "loopback.example": "127.0.0.1", "metadata.example": "169.254.169.254", "hooks.example.com": "93.184.216.34" };
  const resolver = async (host: string) => [{ address: table[host] ?? "93.184.216.34", family: 4 }];
  const start = (env: NodeJS.ProcessEnv = {}) => startTestApp({}, { PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "0", PARLEY_WEBHOOK_VERIFY_URL: "0", ...env }, undefined, { hostResolver: resolver });

  it("are refused at creation and update with 400 invalid_url naming the reason, as literals and as names", async () => {
    const strict = await start();
    try {
      const owner = await strict.account();
      const refused: Array<[string, RegExp]> = [
        ["https://10.0.0.5/hook", /10\.0\.0\.5 is a private address/],
        ["https://192.168.1.20/hook", /private address/],
        ["https://169.254.169.254/latest/meta-data/", /link-local/],
        ["https://[::ffff:10.0.0.1]/hook", /\(10\.0\.0\.1\) is a private address/],
        ["https://[fd00::1]/hook", /unique local/],
        ["https://[::1]/hook", /loopback/],
        ["https://0.0.0.0/hook", /unspecified/],
        // A name's refusal says neither the address nor its kind: no map of the internal DNS.
        ["https://internal.example/hook", /internal\.example resolves to an address it may not reach; (?!.*10\.0\.0\.5)/],
        ["https://metadata.example/hook", /metadata\.example resolves to an address it may not reach; (?!.*(169\.254|link-local))/],
        ["https://loopback.example/hook", /loopback\.example resolves to an address it may not reach; (?!.*127\.0\.0\.1)/],
      ];
      for (const [url, reason] of refused) {
        const res = await create({ ...minimal, url }, owner.key, strict);
        expect(res.status, url).toBe(400);
        expect(errorOf(res).code).toBe("invalid_url");
        expect(errorOf(res).message).toMatch(reason);
        expect(errorOf(res).message).toContain("PARLEY_WEBHOOK_ALLOW_NETWORKS");
      }
      const created = await create(minimal, owner.key, strict);
      expect(created.status).toBe(201);
      const moved = await strict.request("PATCH", `/v1/webhooks/${created.body.id}`, { key: owner.key, body: { url: "https://internal.example/other" } });
      expect(moved.status).toBe(400);
      expect(errorOf(moved).code).toBe("invalid_url");
      expect((await strict.request("GET", `/v1/webhooks/${created.body.id}`, { key: owner.key })).body.url).toBe(minimal.url);
    } finally {
      await strict.close();
    }
  });

  it("are accepted inside PARLEY_WEBHOOK_ALLOW_NETWORKS, and a bad entry stops start-up", async () => {
    const lan = await start({ PARLEY_WEBHOOK_ALLOW_NETWORKS: "10.0.0.0/24, fd00::/8" });
    try {
      const owner = await lan.account();
      for (const url of ["https://internal.example/hook", "https://10.0.0.9/hook", "https://[fd00::1]/hook"]) expect((await create({ ...minimal, url }, owner.key, lan)).status, url).toBe(201);
      expect(errorOf(await create({ ...minimal, url: "https://10.0.1.1/hook" }, owner.key, lan)).code).toBe("invalid_url");
      expect(errorOf(await create({ ...minimal, url: "https://loopback.example/hook" }, owner.key, lan)).code).toBe("invalid_url");
    } finally {
      await lan.close();
    }
    await expect(start({ PARLEY_WEBHOOK_ALLOW_NETWORKS: "10.0.0.0/24, 10.0.0.0/" })).rejects.toThrow(/PARLEY_WEBHOOK_ALLOW_NETWORKS: "10\.0\.0\.0\/" is not an IP address or CIDR/);
  });
});

describe("GET /v1/webhooks", () => {
  let lister: TestAccount;
  const urls: string[] = [];

  beforeAll(async () => {
    lister = await app.account();
    for (let i = 0; i < 7; i++) {
      const url = `https://hooks.example.com/${i}`;
      urls.push(url);
      const res = await create({ ...minimal, url }, lister.key);
      expect(res.status).toBe(201);
      // Creations in one millisecond would tie; distinct creation times make the expected order exact.
      const at = `2026-01-01T00:00:0${i}.000Z`;
      await app.parley.services.db.updateTable("webhooks").set({ created_at: at, updated_at: at }).where("id", "=", res.body.id).execute();
    }
    const all = await app.request("GET", "/v1/webhooks?limit=100&order=asc", { key: lister.key });
    await app.request("PATCH", `/v1/webhooks/${all.body.data[1].id}`, { key: lister.key, body: { status: "inactive" } });
    await app.request("PATCH", `/v1/webhooks/${all.body.data[4].id}`, { key: lister.key, body: { status: "inactive" } });
    // `failing` is set by deliveries, which a later issue builds: write it as they will.
    await app.parley.services.db.updateTable("webhooks").set({ status: "failing", consecutive_failures: 3 }).where("id", "=", all.body.data[2].id).execute();
  });

  it("lists webhooks without secrets, newest first by default", async () => {
    const res = await app.request("GET", "/v1/webhooks", { key: lister.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 7, has_more: false, next_cursor: null });
    expect(Object.keys(res.body.data[0]).sort()).toEqual(WEBHOOK_FIELDS);
    expect(res.body.data.map((w: { url: string }) => w.url)).toEqual([...urls].reverse());
  });

  it("walks every page to the end in both orders", async () => {
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const qs: string = `limit=2&order=${order}` + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
        const res = await app.request("GET", `/v1/webhooks?${qs}`, { key: lister.key });
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(7);
        seen.push(...res.body.data.map((w: { url: string }) => w.url));
        cursor = res.body.has_more ? res.body.next_cursor : null;
        pages++;
      } while (cursor);
      expect(pages).toBe(4);
      expect(seen).toEqual(order === "asc" ? urls : [...urls].reverse());
    }
  });

  it("filters by status", async () => {
    const count = async (status: string) => (await app.request("GET", `/v1/webhooks?status=${status}`, { key: lister.key })).body;
    expect((await count("active")).total).toBe(4);
    const inactive = await count("inactive");
    expect(inactive.total).toBe(2);
    expect(inactive.data.map((w: { url: string }) => w.url)).toEqual([urls[4], urls[1]]);
    const failing = await count("failing");
    expect(failing.data.map((w: { url: string; status: string }) => [w.url, w.status])).toEqual([[urls[2], "failing"]]);
  });

  it("refuses a bad status, limit or cursor, and a cursor from another filter", async () => {
    const status = await app.request("GET", "/v1/webhooks?status=broken", { key: lister.key });
    expect(status.status).toBe(400);
    expect(errorOf(status).code).toBe("invalid_status");
    expect(errorOf(status).message).toContain("status");
    const limit = await app.request("GET", "/v1/webhooks?limit=101", { key: lister.key });
    expect(fieldsOf(limit)).toEqual(["limit"]);
    const garbage = await app.request("GET", "/v1/webhooks?cursor=abc.def", { key: lister.key });
    expect(errorOf(garbage).code).toBe("invalid_cursor");
    const first = await app.request("GET", "/v1/webhooks?limit=2", { key: lister.key });
    const other = await app.request("GET", `/v1/webhooks?limit=2&status=active&cursor=${encodeURIComponent(first.body.next_cursor)}`, { key: lister.key });
    expect(errorOf(other).code).toBe("invalid_cursor");
  });

  it("shows only the caller's webhooks", async () => {
    const other = await app.account();
    const res = await app.request("GET", "/v1/webhooks", { key: other.key });
    expect(res.body).toMatchObject({ total: 0, data: [] });
  });
});

describe("GET, PATCH, DELETE /v1/webhooks/{id}", () => {
  it("updates only the given fields and moves updated_at", async () => {
    const { body: webhook } = await create({ ...minimal, description: "first", metadata: { a: 1 } });
    const res = await app.request("PATCH", `/v1/webhooks/${webhook.id}`, {
      key: acct.key,
      body: { url: "https://hooks.example.org/new", events: ["agent.created", "agent.created"], description: null, metadata: { b: 2 } },
    });
    expect(res.status).toBe(200);
    const { secret: _secret, ...before } = webhook;
    expect(res.body).toEqual({
      ...before,
      url: "https://hooks.example.org/new",
      events: ["agent.created"],
      description: null,
      metadata: { b: 2 },
      updated_at: res.body.updated_at,
    });
    expect(res.body.updated_at > webhook.updated_at).toBe(true);
    expect((await app.request("GET", `/v1/webhooks/${webhook.id}`, { key: acct.key })).body).toEqual(res.body);
  });

  it("sets a new secret without showing it", async () => {
    const { body: webhook } = await create(minimal);
    const secret = "rotated-secret-abcdefghij";
    const res = await app.request("PATCH", `/v1/webhooks/${webhook.id}`, { key: acct.key, body: { secret } });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("secret");
    expect((await storedRow(webhook.id))!.secret).toBe(secret);
  });

  it("disables and re-enables; re-enabling clears the failure count; failing cannot be set", async () => {
    const { body: webhook } = await create(minimal);
    const off = await app.request("PATCH", `/v1/webhooks/${webhook.id}`, { key: acct.key, body: { status: "inactive" } });
    expect(off.body.status).toBe("inactive");
    await app.parley.services.db.updateTable("webhooks").set({ consecutive_failures: 10 }).where("id", "=", webhook.id).execute();

    const on = await app.request("PATCH", `/v1/webhooks/${webhook.id}`, { key: acct.key, body: { status: "active" } });
    expect(on.status).toBe(200);
    expect(on.body.status).toBe("active");
    expect((await storedRow(webhook.id))!.consecutive_failures).toBe(0);

    const failing = await app.request("PATCH", `/v1/webhooks/${webhook.id}`, { key: acct.key, body: { status: "failing" } });
    expect(failing.status).toBe(400);
    expect(errorOf(failing).code).toBe("invalid_status");
    expect(errorOf(failing).message).toContain("status");
  });

  it.each([
    [{ url: "http://hooks.example.com/" }, "invalid_url", "url"],
    [{ events: ["call.nope"] }, "invalid_events", "events"],
    [{ events: [] }, "invalid_events", "events"],
    [{ secret: "short" }, "invalid_request", "secret"],
    [{ description: 5 }, "invalid_request", "description"],
    [{ metadata: null }, "invalid_request", "metadata"],
    [{ consecutive_failures: 0 }, "invalid_request", "consecutive_failures"],
  ])("refuses the update %j with %s", async (body, code, field) => {
    const { body: webhook } = await create(minimal);
    const res = await app.request("PATCH", `/v1/webhooks/${webhook.id}`, { key: acct.key, body });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe(code);
    expect(fieldsOf(res)).toContain(field);
    const { secret: _secret, ...unchanged } = webhook;
    expect((await app.request("GET", `/v1/webhooks/${webhook.id}`, { key: acct.key })).body).toEqual(unchanged);
  });

  it("deletes permanently", async () => {
    const { body: webhook } = await create(minimal);
    const res = await app.request("DELETE", `/v1/webhooks/${webhook.id}`, { key: acct.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: webhook.id, deleted: true });
    expect(await storedRow(webhook.id)).toBeUndefined();
    const gone = await app.request("GET", `/v1/webhooks/${webhook.id}`, { key: acct.key });
    expect(gone.status).toBe(404);
    expect(errorOf(gone).code).toBe("webhook_not_found");
    expect(errorOf(await app.request("DELETE", `/v1/webhooks/${webhook.id}`, { key: acct.key })).code).toBe("webhook_not_found");
  });

  it("answers 404 webhook_not_found for unknown ids and 403 unauthorized for another account's", async () => {
    const { body: webhook } = await create(minimal);
    const other = await app.account();
    for (const [method, body] of [["GET", undefined], ["PATCH", { description: "mine now" }], ["DELETE", undefined]] as const) {
      const missing = await app.request(method, "/v1/webhooks/wh_doesnotexist", { key: acct.key, body });
      expect(missing.status).toBe(404);
      expect(errorOf(missing).code).toBe("webhook_not_found");
      const foreign = await app.request(method, `/v1/webhooks/${webhook.id}`, { key: other.key, body });
      expect(foreign.status).toBe(403);
      expect(errorOf(foreign).code).toBe("unauthorized");
    }
    const still = await app.request("GET", `/v1/webhooks/${webhook.id}`, { key: acct.key });
    expect(still.body.description).toBeNull();
  });
});

describe("webhook URL policy: IPv4 carried in IPv6, and names that do not resolve", () => {
  // Names resolve through this table (nothing is looked up); nothing connects anywhere but loopback.
  const table: Record<string, string> = { "internal.example": "10.0.0.5", "translated.example": "::ffff:0:a00:1" };
  const resolver: HostResolver = async (host) => {
    if (host === "gone.example") throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    const address = table[host] ?? "127.0.0.1";
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
  const start = (env: NodeJS.ProcessEnv) => startTestApp({}, env, undefined, { hostResolver: resolver });
  // The URL check comes before the agent is looked up: an unknown agent's 404 means the URL passed.
  const createCall = (on: TestApp, key: string, webhook_url: string) =>
    on.request("POST", "/v1/calls", { key, body: { phone_number: "+14155550123", agent_id: "agent_doesnotexist", webhook_url } });

  it("refuses IPv4-translated (::ffff:0:0:0/96) and local-use NAT64 (64:ff9b:1::/48) addresses by the IPv4 inside", async () => {
    // The probe is off, so nothing would connect even if the policy let one through.
    const strict = await start({ PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "0", PARLEY_WEBHOOK_VERIFY_URL: "0" });
    try {
      const owner = await strict.account();
      const refused: Array<[string, RegExp]> = [
        ["https://[::ffff:0:7f00:1]:8443/", /::ffff:0:7f00:1 \(127\.0\.0\.1\) is a loopback address/],
        ["https://[::ffff:0:a00:1]/hook", /::ffff:0:a00:1 \(10\.0\.0\.1\) is a private address/],
        ["https://[::ffff:0:a9fe:a9fe]/latest/meta-data/", /\(169\.254\.169\.254\) is a link-local/],
        ["https://[64:ff9b:1::7f00:1]/hook", /\(127\.0\.0\.1, read with a \/96 NAT64 prefix\) is a loopback address/],
        ["https://[64:ff9b:1:7f01:1:108:808:808]/hook", /\(127\.1\.1\.1, read with a \/48 NAT64 prefix\) is a loopback address/],
        ["https://translated.example/hook", /translated\.example resolves to an address it may not reach; (?!.*10\.0\.0\.1)/],
      ];
      for (const [url, reason] of refused) {
        const res = await create({ ...minimal, url }, owner.key, strict);
        expect(res.status, url).toBe(400);
        expect(errorOf(res).code, url).toBe("invalid_url");
        expect(fieldsOf(res), url).toEqual(["url"]);
        expect(errorOf(res).message, url).toMatch(reason);
        const call = await createCall(strict, owner.key, url);
        expect(call.status, url).toBe(400);
        expect(errorOf(call).code, url).toBe("invalid_url");
        expect(fieldsOf(call), url).toEqual(["webhook_url"]);
      }
      const created = await create({ ...minimal, url: "https://[::ffff:0:808:808]/hook" }, owner.key, strict);
      expect(created.status).toBe(201);
      const moved = await strict.request("PATCH", `/v1/webhooks/${created.body.id}`, { key: owner.key, body: { url: "https://[::ffff:0:a00:1]/hook" } });
      expect(errorOf(moved).code).toBe("invalid_url");
      expect((await strict.request("GET", `/v1/webhooks/${created.body.id}`, { key: owner.key })).body.url).toBe("https://[::ffff:0:808:808]/hook");
    } finally {
      await strict.close();
    }
  });

  it("refuses the translated form of a private address where loopback is allowed too (the tests' usual setting)", async () => {
    const dev = await start({ PARLEY_WEBHOOK_VERIFY_URL: "0" });
    try {
      const owner = await dev.account();
      const res = await create({ ...minimal, url: "https://[::ffff:0:a00:1]:8443/" }, owner.key, dev);
      expect(res.status).toBe(400);
      expect(errorOf(res).code).toBe("invalid_url");
      expect(errorOf(res).message).toMatch(/\(10\.0\.0\.1\) is a private address/);
    } finally {
      await dev.close();
    }
  });

  it("answers 400 url_unreachable, the same bare answer as a failed connection, for a name that does not resolve", async () => {
    const probing = await start({ PARLEY_WEBHOOK_VERIFY_URL: "1", PARLEY_WEBHOOK_TIMEOUT_MS: "500" });
    const receiver = await startLoopbackHttpServer();
    try {
      const owner = await probing.account();
      const res = await create({ ...minimal, url: "https://gone.example/hook" }, owner.key, probing);
      expect(res.status).toBe(400);
      expect(errorOf(res)).toEqual({ code: "url_unreachable", message: "url: cannot be reached from this server", details: { fields: [{ field: "url", message: "cannot be reached from this server" }] } });

      const created = await create({ ...minimal, url: receiver.url }, owner.key, probing);
      expect(created.status).toBe(201);
      const moved = await probing.request("PATCH", `/v1/webhooks/${created.body.id}`, { key: owner.key, body: { url: "https://gone.example/other" } });
      expect(moved.status).toBe(400);
      expect(errorOf(moved).code).toBe("url_unreachable");
      expect(fieldsOf(moved)).toEqual(["url"]);

      // A call's own webhook_url is not probed, but its name must resolve all the same.
      const call = await createCall(probing, owner.key, "https://gone.example/hook");
      expect(call.status).toBe(400);
      expect(errorOf(call)).toMatchObject({ code: "url_unreachable", message: "webhook_url: cannot be reached from this server" });
      expect(fieldsOf(call)).toEqual(["webhook_url"]);

      // A name resolving into the service's networks stays invalid_url (without naming the address).
      const internal = await create({ ...minimal, url: "https://internal.example/hook" }, owner.key, probing);
      expect(errorOf(internal).code).toBe("invalid_url");
      expect(errorOf(internal).message).toMatch(/internal\.example resolves to an address it may not reach; /);
      expect(errorOf(await createCall(probing, owner.key, "https://internal.example/hook")).code).toBe("invalid_url");

      const list = await probing.request("GET", "/v1/webhooks", { key: owner.key });
      expect(list.body.data.map((w: { url: string }) => w.url)).toEqual([created.body.url]);
    } finally {
      await receiver.close();
      await probing.close();
    }
  });

  it("stores a name that does not resolve when PARLEY_WEBHOOK_VERIFY_URL=0, still refusing one that resolves into the service's networks", async () => {
    const unverified = await start({ PARLEY_WEBHOOK_VERIFY_URL: "0" });
    try {
      const owner = await unverified.account();
      const res = await create({ ...minimal, url: "https://gone.example/hook" }, owner.key, unverified);
      expect(res.status).toBe(201);
      expect(res.body.url).toBe("https://gone.example/hook");
      expect(errorOf(await createCall(unverified, owner.key, "https://gone.example/hook")).code).toBe("agent_not_found");
      expect(errorOf(await create({ ...minimal, url: "https://internal.example/hook" }, owner.key, unverified)).code).toBe("invalid_url");
      expect(errorOf(await createCall(unverified, owner.key, "https://internal.example/hook")).code).toBe("invalid_url");
    } finally {
      await unverified.close();
    }
  });
});
