import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type ApiResponse, type TestAccount, type TestApp } from "../helpers/test-app.js";

// An agent's hand-offs (issue 31): the other agents of its account a call may be passed to, and
// the rules agents' hand-off intents. What is checked when they are saved; the hand-off during
// a call is the engine's.

let app: TestApp;
let acct: TestAccount;
let other: TestAccount;
/** Agents of `acct` to hand off to. */
let billing: string;
let sales: string;

const agentBody = (extra: Record<string, unknown> = {}) => ({ name: "Front desk", system_prompt: "You help.", voice_id: "flite-slt", ...extra });
const createAgent = (extra: Record<string, unknown> = {}, key = acct.key) => app.request("POST", "/v1/agents", { key, body: agentBody(extra) });
const patchAgent = (id: string, body: Record<string, unknown>) => app.request("PATCH", `/v1/agents/${id}`, { key: acct.key, body });
const handoff = (agent_id: string, description = "billing questions, refunds") => ({ agent_id, description });
const fieldsOf = (res: ApiResponse): string[] => errorOf(res).details?.fields?.map((f: { field: string }) => f.field) ?? [];
/** The error answer with `id` written as ID: what a client learns besides the id it sent. */
const withoutId = (res: ApiResponse, id: string) => JSON.parse(JSON.stringify(errorOf(res)).replaceAll(id, "ID"));

async function newAgentId(account = acct, name = "Target"): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key: account.key, body: agentBody({ name }) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
  other = await app.account();
  billing = await newAgentId(acct, "Billing");
  sales = await newAgentId(acct, "Sales");
});
afterAll(async () => {
  await app.close();
});

describe("an agent's handoffs", () => {
  it("are stored, shown, replaced whole by a PATCH, and [] by default", async () => {
    const created = await createAgent({ handoffs: [handoff(billing), handoff(sales, "buying a plan")] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.handoffs).toEqual([handoff(billing), handoff(sales, "buying a plan")]);
    const read = await app.request("GET", `/v1/agents/${created.body.id}`, { key: acct.key });
    expect(read.body.handoffs).toEqual(created.body.handoffs);
    const row = await app.parley.services.db.selectFrom("agents").select("handoffs").where("id", "=", created.body.id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.handoffs)).toEqual(created.body.handoffs);

    const replaced = await patchAgent(created.body.id, { handoffs: [handoff(sales, "new customers")] });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body.handoffs).toEqual([handoff(sales, "new customers")]);
    expect((await app.request("GET", `/v1/agents/${created.body.id}`, { key: acct.key })).body.handoffs).toEqual([handoff(sales, "new customers")]);
    // A PATCH without handoffs leaves them as they are.
    expect((await patchAgent(created.body.id, { name: "Reception" })).body.handoffs).toEqual([handoff(sales, "new customers")]);

    const plain = await createAgent();
    expect(plain.body.handoffs).toEqual([]);
    expect((await patchAgent(created.body.id, { handoffs: [] })).body.handoffs).toEqual([]);
  });

  it("refuse an unknown agent id: 400 agent_not_found naming the field", async () => {
    const res = await createAgent({ handoffs: [handoff(billing), handoff("agent_doesnotexist0000000")] });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("agent_not_found");
    expect(fieldsOf(res)).toEqual(["handoffs[1].agent_id"]);
  });

  it("refuse another account's agent exactly as an unknown id", async () => {
    const theirs = await newAgentId(other);
    const unknown = "agent_" + "x".repeat(theirs.length - "agent_".length);
    const foreign = await createAgent({ handoffs: [handoff(theirs)] });
    const missing = await createAgent({ handoffs: [handoff(unknown)] });
    expect(foreign.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(withoutId(foreign, theirs)).toEqual(withoutId(missing, unknown));
    expect(errorOf(foreign).code).toBe("agent_not_found");
    // And on an update.
    const mine = await newAgentId();
    const patched = await patchAgent(mine, { handoffs: [handoff(theirs)] });
    expect(patched.status).toBe(400);
    expect(withoutId(patched, theirs)).toEqual(withoutId(missing, unknown));
  });

  it("refuse a deleted agent as an unknown one", async () => {
    const gone = await newAgentId();
    expect((await app.request("DELETE", `/v1/agents/${gone}`, { key: acct.key })).status).toBe(200);
    const res = await createAgent({ handoffs: [handoff(gone)] });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("agent_not_found");
    expect(fieldsOf(res)).toEqual(["handoffs[0].agent_id"]);
  });

  it("refuse the agent itself (400 invalid_request naming the field)", async () => {
    const mine = await newAgentId();
    const res = await patchAgent(mine, { handoffs: [handoff(billing), handoff(mine)] });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("invalid_request");
    expect(fieldsOf(res)).toEqual(["handoffs[1].agent_id"]);
    expect((await app.request("GET", `/v1/agents/${mine}`, { key: acct.key })).body.handoffs).toEqual([]);
  });

  it.each([
    ["the same agent twice", () => [handoff(billing), handoff(sales), handoff(billing, "refunds")], "handoffs[2].agent_id"],
    ["more than 5", () => Array.from({ length: 6 }, (_, i) => handoff(`agent_${i}`)), "handoffs"],
    ["a blank description", () => [handoff(billing, "  ")], "handoffs[0].description"],
    ["a description past 500 characters", () => [handoff(billing, "x".repeat(501))], "handoffs[0].description"],
    ["no description", () => [{ agent_id: billing }], "handoffs[0].description"],
    ["an empty agent id", () => [handoff("")], "handoffs[0].agent_id"],
    ["an unknown field", () => [{ ...handoff(billing), voice_id: "flite-slt" }], "handoffs[0].voice_id"],
    ["a handoff that is not an object", () => [billing], "handoffs[0]"],
  ])("refuse %s (400 invalid_request naming the field)", async (_name, handoffs, field) => {
    const res = await createAgent({ handoffs: handoffs() });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("invalid_request");
    expect(fieldsOf(res)).toContain(field);
  });

  it("accept a description of exactly 500 characters and 5 hand-offs", async () => {
    const ids = [billing, sales, await newAgentId(), await newAgentId(), await newAgentId()];
    const res = await createAgent({ handoffs: ids.map((id) => handoff(id, "x".repeat(500))) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.handoffs).toHaveLength(5);
  });

  it("may name an agent that is later deleted; the agent is then saved again only without it", async () => {
    const target = await newAgentId();
    const front = await createAgent({ handoffs: [handoff(target)] });
    expect((await app.request("DELETE", `/v1/agents/${target}`, { key: acct.key })).status).toBe(200);
    expect((await app.request("GET", `/v1/agents/${front.body.id}`, { key: acct.key })).body.handoffs).toEqual([handoff(target)]);
    const renamed = await patchAgent(front.body.id, { name: "Reception" });
    expect(renamed.status).toBe(400);
    expect(errorOf(renamed).code).toBe("agent_not_found");
    expect((await patchAgent(front.body.id, { name: "Reception", handoffs: [] })).status).toBe(200);
  });
});

describe("hand-off intents of a rules agent", () => {
  const handoffIntent = (handoff_to: string, extra: Record<string, unknown> = {}) => ({
    examples: ["I have a question about my bill"],
    handoff_to,
    reply: "Let me pass you to our billing team.",
    ...extra,
  });

  it("are stored as given, beside the agent's handoffs", async () => {
    const res = await createAgent({ handoffs: [handoff(billing)], intents: [handoffIntent(billing)] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.intents).toEqual([handoffIntent(billing)]);
    expect((await app.request("GET", `/v1/agents/${res.body.id}`, { key: acct.key })).body.intents).toEqual([handoffIntent(billing)]);
  });

  it("must name one of the agent's handoffs", async () => {
    const none = await createAgent({ intents: [handoffIntent(billing)] });
    expect(none.status).toBe(400);
    expect(errorOf(none).code).toBe("invalid_request");
    expect(fieldsOf(none)).toEqual(["intents[0].handoff_to"]);
    expect(errorOf(none).message).toContain("add it to handoffs");
    const elsewhere = await createAgent({ handoffs: [handoff(sales)], intents: [handoffIntent(billing)] });
    expect(elsewhere.status).toBe(400);
    expect(fieldsOf(elsewhere)).toEqual(["intents[0].handoff_to"]);
    expect(errorOf(elsewhere).message).toContain(sales);
  });

  it("keep their hand-off: removing a hand-off an intent uses is refused", async () => {
    const created = await createAgent({ handoffs: [handoff(billing)], intents: [handoffIntent(billing)] });
    const removed = await patchAgent(created.body.id, { handoffs: [] });
    expect(removed.status).toBe(400);
    expect(fieldsOf(removed)).toEqual(["intents[0].handoff_to"]);
  });

  it.each([
    ["both a tool and handoff_to", { tool: "order_status" }, "intents[0]"],
    ["slots", { slots: [{ name: "order_id", question: "Your order number?" }] }, "intents[0].slots"],
    ["a failure line", { failure: "Sorry." }, "intents[0].failure"],
  ])("refuse a hand-off intent with %s (400 naming the field)", async (_name, extra, field) => {
    const res = await createAgent({ handoffs: [handoff(billing)], intents: [handoffIntent(billing, extra)] });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("invalid_request");
    expect(fieldsOf(res)).toContain(field);
  });

  it("refuse an intent with neither a tool nor handoff_to, naming intents[i]", async () => {
    const res = await createAgent({ handoffs: [handoff(billing)], intents: [handoffIntent(billing), { examples: ["hello"], reply: "Hi." }] });
    expect(res.status).toBe(400);
    expect(fieldsOf(res)).toEqual(["intents[1]"]);
  });
});

describe("the built-in handoff tool", () => {
  it("is a name a custom tool may not take", async () => {
    const tool = {
      name: "handoff",
      description: "Passes the caller on.",
      parameters: { type: "object", properties: {} },
      url: "https://example.com/handoff",
      signing_secret: "SIGNING",
    };
    const res = await createAgent({ tools: [tool] });
    expect(res.status).toBe(400);
    expect(errorOf(res).code).toBe("invalid_request");
    expect(fieldsOf(res)).toEqual(["tools[0].name"]);
  });
});
