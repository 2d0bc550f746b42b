import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ToolResult } from "../../../engine/tools.js";
import { guardedLookup, type WebhookNetworkPolicy } from "../../../src/services/webhook-network-policy.js";
import { WebhookSender } from "../../../src/services/webhook-sender.js";
import { WebhookTargets } from "../../../src/services/webhook-targets.js";
import { argumentsChecker, secretNamesOf } from "../../../src/services/http-tool-rules.js";
import { callHttpTool, type HttpTool, type HttpToolDeps } from "../../../src/telephony/http-tool.js";

/** A receiver on loopback: what it was sent, and how it answers (changed per test). */
interface Received {
  headers: IncomingMessage["headers"];
  body: string;
}

const SIGNING_VALUE = "whsec_signing-value-9f8e7d";
const API_KEY_VALUE = "sk_live_order-api-key-1a2b3c";
const NOW = Date.UTC(2025, 0, 2, 3, 4, 5);

const loopbackAllowed: WebhookNetworkPolicy = { allowLoopback: true, allowNetworks: [] };
const noProbe = { probe: async () => true };

let receiver: Server;
let receiverUrl: string;
let received: Received[] = [];
let answer: (req: IncomingMessage, res: ServerResponse) => void;

/** A second receiver, the target of the redirect: it must never be reached. */
let elsewhere: Server;
let elsewhereUrl: string;
let elsewhereReached = 0;

let sender: WebhookSender;

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      answer(req, res);
    });
  });
  receiverUrl = await listen(receiver);
  elsewhere = createServer((_req, res) => {
    elsewhereReached++;
    res.writeHead(200, { "content-type": "application/json" }).end('{"status":"redirected"}');
  });
  elsewhereUrl = await listen(elsewhere);
  // The sender's own timeout is long: only the tool's timeout_ms can end the hanging test quickly.
  sender = new WebhookSender({ timeoutMs: 10_000, responseBodyLimit: 1024, lookup: guardedLookup(loopbackAllowed) });
});

afterAll(async () => {
  await sender.close();
  await close(receiver);
  await close(elsewhere);
});

afterEach(() => {
  received = [];
  elsewhereReached = 0;
});

const json = (status: number, body: string) => (_req: IncomingMessage, res: ServerResponse) => res.writeHead(status, { "content-type": "application/json" }).end(body);

function tool(overrides: Partial<HttpTool> = {}): HttpTool {
  return {
    name: "order_status",
    description: "Looks up an order",
    parameters: {
      type: "object",
      properties: { order_id: { type: "string", maxLength: 20 }, quantity: { type: "integer", minimum: 1 }, speed: { enum: ["standard", "express"] } },
      required: ["order_id"],
      additionalProperties: false,
    },
    url: `${receiverUrl}/tools/order-status`,
    method: "POST",
    timeout_ms: 5000,
    headers: { Authorization: "Bearer {{secrets.ORDER_API_KEY}}", "X-Shop": "north" },
    signing_secret: "TOOL_SIGNING",
    ...overrides,
  };
}

function deps(overrides: Partial<HttpToolDeps> = {}, policy: WebhookNetworkPolicy = loopbackAllowed): HttpToolDeps {
  const targets = new WebhookTargets({ allowLoopbackHttp: true, verifyReachable: false }, policy, noProbe);
  const stored = new Map([
    ["TOOL_SIGNING", SIGNING_VALUE],
    ["ORDER_API_KEY", API_KEY_VALUE],
  ]);
  return {
    sender,
    checkTarget: (url) => targets.checkForAttempt(url),
    secrets: async (names) => new Map(names.filter((n) => stored.has(n)).map((n) => [n, stored.get(n)!])),
    now: () => NOW,
    ...overrides,
  };
}

const context = { callId: "call_123", agentId: "agent_456" };

/** The receiver's check: Stripe's scheme, recomputed, compared in constant time. */
function signatureValid(header: string | undefined, body: string, secret: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? "");
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${body}`).digest();
  const given = Buffer.from(match[2]!, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected) && Number(match[1]) === Math.floor(NOW / 1000);
}

/** No failure text may carry a secret's value or a header's value. */
function expectNoSecrets(result: ToolResult): void {
  const text = JSON.stringify(result);
  expect(text).not.toContain(SIGNING_VALUE);
  expect(text).not.toContain(API_KEY_VALUE);
  expect(text).not.toContain("Bearer");
}

function expectFailure(result: ToolResult, pattern: RegExp): void {
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.error).toMatch(pattern);
  expectNoSecrets(result);
}

describe("callHttpTool", () => {
  it("sends the signed arguments with the secret filled in and gives the model the JSON answer", async () => {
    answer = json(200, '{"status":"shipped"}');
    const result = await callHttpTool(tool(), { order_id: "A-17", speed: "express" }, context, deps());
    expect(result).toEqual({ ok: true, data: { status: "shipped" } });
    expect(received).toHaveLength(1);
    const [got] = received;
    expect(signatureValid(got!.headers["x-parley-signature"] as string, got!.body, SIGNING_VALUE)).toBe(true);
    expect(got!.headers.authorization).toBe(`Bearer ${API_KEY_VALUE}`);
    expect(got!.headers["x-shop"]).toBe("north");
    expect(got!.headers["x-parley-tool"]).toBe("order_status");
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["user-agent"]).toMatch(/^Parley\//);
    expect(JSON.parse(got!.body)).toEqual({ tool: "order_status", arguments: { order_id: "A-17", speed: "express" }, call_id: "call_123", agent_id: "agent_456" });
  });

  it("scrubs a secret the receiver echoes back out of the answer the model and the call's record get", async () => {
    answer = (req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "shipped", debug: { saw: [String(req.headers.authorization)] } }));
    const result = await callHttpTool(tool(), { order_id: "A-17" }, context, deps());
    expect(result).toEqual({ ok: true, data: { status: "shipped", debug: { saw: ["Bearer {{secrets.ORDER_API_KEY}}"] } } });
  });

  it("keeps Parley's signature, tool name, content-type and user-agent whatever the tool's headers say", async () => {
    answer = json(200, '{"status":"shipped"}');
    const headers = { "x-parley-SIGNATURE": "t=1,v1=forged", "X-PARLEY-TOOL": "refund_everything", "Content-Type": "text/plain", "user-agent": "evil", Authorization: "Bearer {{secrets.ORDER_API_KEY}}" };
    const result = await callHttpTool(tool({ headers }), { order_id: "A-17" }, context, deps());
    expect(result.ok).toBe(true);
    const [got] = received;
    expect(signatureValid(got!.headers["x-parley-signature"] as string, got!.body, SIGNING_VALUE)).toBe(true);
    expect(got!.headers["x-parley-tool"]).toBe("order_status");
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["user-agent"]).toMatch(/^Parley\//);
  });

  it("gives up after the tool's timeout_ms when the receiver never answers", async () => {
    answer = () => {}; // holds the request open
    const result = await callHttpTool(tool({ timeout_ms: 200 }), { order_id: "A-17" }, context, deps());
    expectFailure(result, /no answer.*within 200 ms/);
    expect(received).toHaveLength(1);
  });

  it("names the status of a failed answer", async () => {
    answer = json(500, '{"error":"database down"}');
    expectFailure(await callHttpTool(tool(), { order_id: "A-17" }, context, deps()), /HTTP 500/);
  });

  it("says an answer that is not JSON is not a JSON object", async () => {
    answer = (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>shipped</html>");
    expectFailure(await callHttpTool(tool(), { order_id: "A-17" }, context, deps()), /not a JSON object/);
  });

  it("says a JSON array is not a JSON object", async () => {
    answer = json(200, '[{"status":"shipped"}]');
    expectFailure(await callHttpTool(tool(), { order_id: "A-17" }, context, deps()), /not a JSON object/);
  });

  it("says an answer that fills the sender's body cap is too large, even when its start parses", async () => {
    // A whole JSON object of exactly the cap's size still filled it: it cannot be told from a cut one.
    const big = JSON.stringify({ status: "shipped", note: "x".repeat(1024 - 32) });
    answer = json(200, big.padEnd(1024, " "));
    expectFailure(await callHttpTool(tool(), { order_id: "A-17" }, context, deps()), /too large/);
  });

  it("does not follow a redirect, and says so", async () => {
    answer = (_req, res) => res.writeHead(302, { location: `${elsewhereUrl}/steal` }).end();
    expectFailure(await callHttpTool(tool(), { order_id: "A-17" }, context, deps()), /redirect.*not followed/);
    expect(elsewhereReached).toBe(0);
  });

  it("says when nothing listens at the URL", async () => {
    const gone = createServer();
    const url = await listen(gone);
    await close(gone);
    expectFailure(await callHttpTool(tool({ url }), { order_id: "A-17" }, context, deps()), /no answer.*connection refused/);
  });

  it.each([
    ["a missing required argument", {}, /missing required argument order_id/],
    ["an argument of the wrong type", { order_id: 17 }, /argument order_id: expected string/],
    ["an extra argument when additionalProperties is false", { order_id: "A-17", coupon: "FREE" }, /unexpected argument.*coupon/],
    ["an argument below its minimum", { order_id: "A-17", quantity: 0 }, /argument quantity/],
    ["an argument outside its enum", { order_id: "A-17", speed: "teleport" }, /argument speed/],
  ])("sends nothing for %s and says which argument", async (_label, args, pattern) => {
    answer = json(200, '{"status":"shipped"}');
    const result = await callHttpTool(tool(), args as Record<string, unknown>, context, deps());
    expectFailure(result, pattern);
    if (!result.ok) expect(result.error).toMatch(/no request was sent/);
    expect(received).toHaveLength(0);
  });

  it("sends nothing when a secret it needs is missing, and names it (never a value)", async () => {
    answer = json(200, '{"status":"shipped"}');
    const headers = { Authorization: "Bearer {{secrets.ORDER_API_KEY}}", "X-Other": "{{secrets.WAREHOUSE_TOKEN}}" };
    const result = await callHttpTool(tool({ headers }), { order_id: "A-17" }, context, deps());
    expectFailure(result, /no secret named WAREHOUSE_TOKEN/);
    expect(received).toHaveLength(0);
  });

  it("sends nothing when the signing secret is missing", async () => {
    answer = json(200, '{"status":"shipped"}');
    expectFailure(await callHttpTool(tool({ signing_secret: "GONE" }), { order_id: "A-17" }, context, deps()), /no secret named GONE/);
    expect(received).toHaveLength(0);
  });

  it("sends nothing when the target check refuses the URL, and says why", async () => {
    answer = json(200, '{"status":"shipped"}');
    const refusing = deps({}, { allowLoopback: false, allowNetworks: [] });
    const result = await callHttpTool(tool(), { order_id: "A-17" }, context, refusing);
    expectFailure(result, /may not be called.*loopback/);
    expect(received).toHaveLength(0);
  });

  it("sends nothing when a secret's value would break a header line", async () => {
    answer = json(200, '{"status":"shipped"}');
    const secrets: HttpToolDeps["secrets"] = async (names) =>
      new Map(names.map((n) => [n, n === "ORDER_API_KEY" ? `${API_KEY_VALUE}\r\nX-Injected: 1` : SIGNING_VALUE]));
    const result = await callHttpTool(tool(), { order_id: "A-17" }, context, deps({ secrets }));
    expectFailure(result, /header Authorization.*line break/);
    expect(received).toHaveLength(0);
  });
});

describe("secretNamesOf", () => {
  it("lists the signing secret and every secret the header values name, once each", () => {
    const names = secretNamesOf({ signing_secret: "SIGN", headers: { A: "{{secrets.KEY}}:{{secrets.OTHER}}", B: "{{ secrets.KEY }}", C: "plain {{secret.NOPE}}" } });
    expect(names.sort()).toEqual(["KEY", "OTHER", "SIGN"]);
  });
});

describe("argumentsChecker", () => {
  it("refuses a schema that is not an object's", () => {
    expect(() => argumentsChecker({ type: "string" })).toThrow(/"object"/);
  });

  it.each([
    [{ type: "object", properties: { a: { type: "string", pattern: "(a+)+$" } } }, /pattern/],
    [{ type: "object", properties: { a: { $ref: "#/definitions/x" } } }, /\$ref/],
    [{ type: "object", properties: { a: { type: "strin" } } }, /type/],
    [{ type: "object", properties: { a: { anyOf: [] } } }, /anyOf/],
    [{ type: "object", required: "a" }, /required/],
    [{ type: "object", properties: { a: { type: "string", maxLength: -1 } } }, /maxLength/],
  ])("refuses a schema it cannot enforce: %j", (schema, pattern) => {
    expect(() => argumentsChecker(schema as Record<string, unknown>)).toThrow(pattern);
  });

  it("checks nested objects and arrays", () => {
    const check = argumentsChecker({
      type: "object",
      properties: { items: { type: "array", items: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] }, maxItems: 2 } },
    });
    expect(check({ items: [{ sku: "a" }] })).toBeNull();
    expect(check({ items: [{}] })).toMatch(/missing required argument items\.0\.sku/);
    expect(check({ items: [{ sku: "a" }, { sku: "b" }, { sku: "c" }] })).toMatch(/argument items/);
  });
});
