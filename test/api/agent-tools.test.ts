import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// An agent's custom HTTP tools (issue 31): what is checked when they are saved. Calling them
// is test/unit/telephony/http-tool.test.ts and test/e2e/custom-tools.test.ts.

let app: TestApp;
let acct: TestAccount;
let other: TestAccount;

const tool = (overrides: Record<string, unknown> = {}) => ({
  name: "order_status",
  description: "Looks up where an order is.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  url: "https://orders.example.com/parley",
  headers: { Authorization: "Bearer {{secrets.ORDERS_TOKEN}}" },
  signing_secret: "ORDERS_SIGNING",
  ...overrides,
});

const createAgent = (tools: unknown, key = acct.key) => app.request("POST", "/v1/agents", { key, body: { name: "Orders", system_prompt: "You help.", voice_id: "flite-slt", tools } });
const fieldsOf = (res: ApiResponse) => errorOf(res).details?.fields?.map((f: { field: string }) => f.field) ?? [errorOf(res).details?.field];

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
  other = await app.account();
  for (const name of ["ORDERS_SIGNING", "ORDERS_TOKEN"]) {
    expect((await app.request("POST", "/v1/secrets", { key: acct.key, body: { name, value: `value of ${name}` } })).status).toBe(201);
  }
});
afterAll(async () => {
  await app.close();
});

describe("an agent's tools", () => {
  it("are stored with their defaults and shown with secret references, never values", async () => {
    const res = await createAgent([tool()]);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.tools).toEqual([{ ...tool(), method: "POST", timeout_ms: 5000 }]);
    expect(JSON.stringify(res.body)).not.toContain("value of");
    const read = await app.request("GET", `/v1/agents/${res.body.id}`, { key: acct.key });
    expect(read.body.tools).toEqual(res.body.tools);
    // Replaced whole by an update; an agent without tools has [].
    const cleared = await app.request("PATCH", `/v1/agents/${res.body.id}`, { key: acct.key, body: { tools: [] } });
    expect(cleared.body.tools).toEqual([]);
  });

  it.each([
    ["a built-in tool's name", [tool({ name: "transfer_call" })], "tools[0].name"],
    ["a name that is not snake_case", [tool({ name: "Order-Status" })], "tools[0].name"],
    ["two tools of one name", [tool(), tool()], "tools[1].name"],
    ["parameters that are not an object's schema", [tool({ parameters: { type: "string" } })], "tools[0].parameters"],
    ["a header Parley sets itself", [tool({ headers: { "X-Parley-Signature": "forged" } })], "tools[0].headers.X-Parley-Signature"],
    ["a header value with another template", [tool({ headers: { Authorization: "{{env.HOME}}" } })], "tools[0].headers.Authorization"],
    ["a header value on two lines", [tool({ headers: { Authorization: "a\r\nX-Evil: 1" } })], "tools[0].headers.Authorization"],
    ["a timeout past the tool runner's 10 s", [tool({ timeout_ms: 10_001 })], "tools[0].timeout_ms"],
    ["a method other than POST", [tool({ method: "GET" })], "tools[0].method"],
    ["an unknown field", [tool({ retries: 3 })], "tools[0]"],
  ])("refuse %s, naming the field", async (_name, tools, field) => {
    const res = await createAgent(tools);
    expect(res.status).toBe(400);
    expect(fieldsOf(res).join(" ")).toContain(field);
  });

  it("refuse parameters Parley cannot check arguments against (a regular expression a caller's words would run)", async () => {
    const res = await createAgent([tool({ parameters: { type: "object", properties: { order_id: { type: "string", pattern: "^(a+)+$" } } } })]);
    expect(res.status).toBe(400);
    expect(errorOf(res).message + JSON.stringify(errorOf(res).details)).toMatch(/tools\[0\]\.parameters/);
    expect(JSON.stringify(errorOf(res))).toMatch(/pattern/);
  });

  it("refuse a URL webhooks may not reach: plain http elsewhere than loopback, or a link-local address (checked without connecting)", async () => {
    for (const url of ["http://orders.example.com/parley", "https://169.254.169.254/latest/meta-data"]) {
      const res = await createAgent([tool({ url })]);
      expect(res.status, url).toBe(400);
      expect(JSON.stringify(errorOf(res))).toContain("tools[0].url");
    }
  });

  it("refuse a secret the account does not have (another account's of that name does not count), naming it", async () => {
    const missing = await createAgent([tool({ signing_secret: "NOT_THERE" })]);
    expect(missing.status).toBe(400);
    expect(errorOf(missing)).toMatchObject({ code: "secret_not_found" });
    expect(JSON.stringify(errorOf(missing))).toContain("NOT_THERE");
    const header = await createAgent([tool({ headers: { "X-Api-Key": "{{secrets.NOPE}}" } })]);
    expect(errorOf(header)).toMatchObject({ code: "secret_not_found" });
    expect(JSON.stringify(errorOf(header))).toContain("tools[0].headers");
    // The other account has no ORDERS_* secrets: the same tool is refused there.
    expect(errorOf(await createAgent([tool()], other.key))).toMatchObject({ code: "secret_not_found" });
  });

  it("need secrets:write besides agents:write to be set or changed (they send the account's secrets to their URLs)", async () => {
    const agentsOnly = await app.key(acct.id, ["agents:write"]);
    const refused = await createAgent([tool()], agentsOnly);
    expect(refused.status).toBe(403);
    expect(errorOf(refused)).toMatchObject({ code: "forbidden" });
    expect(errorOf(refused).message).toContain("secrets:write");
    // Without tools, or leaving an agent's tools as they are, agents:write is enough.
    const plain = await createAgent([], agentsOnly);
    expect(plain.status).toBe(201);
    const withTools = await createAgent([tool()]);
    const renamed = await app.request("PATCH", `/v1/agents/${withTools.body.id}`, { key: agentsOnly, body: { name: "Order desk", tools: withTools.body.tools } });
    expect(renamed.status).toBe(200);
    const pointed = await app.request("PATCH", `/v1/agents/${withTools.body.id}`, { key: agentsOnly, body: { tools: [tool({ url: "https://collector.example.net/x" })] } });
    expect(pointed.status).toBe(403);
  });

  it("are at most 20", async () => {
    const res = await createAgent(Array.from({ length: 21 }, (_, i) => tool({ name: `tool_${i}` })));
    expect(res.status).toBe(400);
    expect(fieldsOf(res).join(" ")).toContain("tools");
  });
});

describe("an agent's intents (requests a rules agent answers with one of its tools)", () => {
  const intent = (overrides: Record<string, unknown> = {}) => ({
    examples: ["where is my order"],
    tool: "order_status",
    slots: [{ name: "order_id", question: "What is your order number?" }],
    reply: "Your order is {{status}}.",
    ...overrides,
  });
  const withIntents = (intents: unknown, tools: unknown = [tool()]) =>
    app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Orders", system_prompt: "You help.", voice_id: "flite-slt", tools, intents } });

  it("are stored with the default failure line", async () => {
    const res = await withIntents([intent()]);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.intents).toEqual([{ ...intent(), failure: "Sorry, I could not do that right now." }]);
  });

  it("must name one of the agent's tools and ask only for its parameters", async () => {
    const unknownTool = await withIntents([intent({ tool: "refund" })]);
    expect(unknownTool.status).toBe(400);
    expect(JSON.stringify(errorOf(unknownTool))).toContain("intents[0].tool");
    const notAParameter = await withIntents([intent({ slots: [{ name: "email", question: "Your email?" }] })]);
    expect(notAParameter.status).toBe(400);
    expect(JSON.stringify(errorOf(notAParameter))).toContain("intents[0].slots[0].name");
    expect(JSON.stringify(errorOf(notAParameter))).toContain("order_id");
    const noExamples = await withIntents([intent({ examples: [] })]);
    expect(fieldsOf(noExamples).join(" ")).toContain("intents[0].examples");
  });

  it("keep their tool: removing a tool an intent uses is refused", async () => {
    const created = await withIntents([intent()]);
    const removed = await app.request("PATCH", `/v1/agents/${created.body.id}`, { key: acct.key, body: { tools: [] } });
    expect(removed.status).toBe(400);
    expect(JSON.stringify(errorOf(removed))).toContain("intents[0].tool");
  });
});
