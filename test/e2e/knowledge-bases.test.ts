import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import type { ChatRequest, StandinReply } from "../../scripts/standins/openai-chat-standin.js";
import { agentLines, scriptedCall, startStandinApp } from "../helpers/standin-call.js";
import type { TestAccount, TestApp } from "../helpers/test-app.js";

// Issue 31: agents answer callers from the account's documents: a rules agent says the best
// passage's sentence, a chat model gets the passages in its prompt; a question the documents do
// not cover is answered "I don't know"; a deleted document no longer answers.

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio");
/** What the caller sends: one second of speech (the stand-in recognizer hears the scripted words in any). */
const LINE = parseWav(readFileSync(path.join(FIXTURES, "opening-hours.16k.wav"))).samples.subarray(4000, 20000);
/** The agents' greeting: short, as the stand-in speaks in real time. */
const GREETING = "Hello.";

const DOCUMENTS = [
  { name: "hours.md", type: "text/markdown", body: "# Opening hours\n\nWe are open Monday to Friday from 9 am to 5 pm. On Saturdays we open at 10 am and close at noon.\n" },
  { name: "visit.html", type: "text/html", body: "<html><body><h1>Visiting us</h1><p>There is free parking behind the building.</p><script>var secret = 1;</script></body></html>" },
  { name: "prices.txt", type: "text/plain", body: "A teeth whitening costs 300 dollars. A cleaning costs 90 dollars." },
];

/** What the speech stand-in hears in the next call, utterance by utterance. */
let callerSays: string[] = [];

/** A knowledge base with DOCUMENTS in `app`'s account; the documents' ids by name. */
async function knowledgeBase(app: TestApp, key: string) {
  const kb = await app.request("POST", "/v1/knowledge-bases", { key, body: { name: "Front desk" } });
  expect(kb.status, JSON.stringify(kb.body)).toBe(201);
  const ids = new Map<string, string>();
  for (const doc of DOCUMENTS) {
    const res = await fetch(`${app.baseUrl}/v1/knowledge-bases/${kb.body.id}/documents?name=${doc.name}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": doc.type }, body: doc.body });
    expect(res.status, await res.clone().text()).toBe(201);
    ids.set(doc.name, ((await res.json()) as { id: string }).id);
  }
  return { id: kb.body.id as string, documents: ids };
}

/** A call where the caller says each of `callerSays` in turn; the agent's lines and the stored call's actions. */
async function call(app: TestApp, acct: TestAccount, agentId: string) {
  const client = await scriptedCall(app.baseUrl, acct.key, agentId, LINE, callerSays.length);
  const said = agentLines(client);
  const callId = (client.messages.find((m) => m.message.type === "connected")!.message as { call_id: string }).call_id;
  let actions: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 100 && actions.length === 0; i++) {
    const row = await app.parley.services.db.selectFrom("calls").select("actions").where("id", "=", callId).executeTakeFirst();
    actions = row?.actions ? JSON.parse(row.actions) : [];
    if (actions.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  return { said, actions };
}

describe("a rules agent with a knowledge base", () => {
  let world: Awaited<ReturnType<typeof startStandinApp>>;
  let app: TestApp;
  let acct: TestAccount;
  beforeAll(async () => {
    world = await startStandinApp({ callerSays: () => callerSays });
    ({ app, acct } = world);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it("answers from the right passage, says it does not know what the documents do not cover, and forgets a deleted document", async () => {
    const kb = await knowledgeBase(app, acct.key);
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Front desk", system_prompt: "You answer for Acme Dental.", voice_id: "openai-alloy", first_message: GREETING, knowledge_base_ids: [kb.id] },
    });
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);

    callerSays = ["are you open on saturdays", "is there parking", "do you sell pizza"];
    const first = await call(app, acct, agent.body.id);
    expect(first.said).toEqual([
      GREETING,
      "On Saturdays we open at 10 am and close at noon. Is there anything else I can help you with?",
      "There is free parking behind the building. Is there anything else I can help you with?",
      "I'm sorry, I don't have an answer to that. Is there anything else I can help you with?",
    ]);
    // Which passage answered each question is recorded with the call.
    const answered = first.actions.filter((a) => a.type === "answered_question");
    expect(answered).toEqual([
      { type: "answered_question", question: "are you open on saturdays", passage_id: expect.stringMatching(/^kbp_/) },
      { type: "answered_question", question: "is there parking", passage_id: expect.stringMatching(/^kbp_/) },
    ]);

    const removed = await app.request("DELETE", `/v1/knowledge-bases/${kb.id}/documents/${kb.documents.get("hours.md")}`, { key: acct.key });
    expect(removed.status).toBe(200);
    callerSays = ["are you open on saturdays"];
    const after = await call(app, acct, agent.body.id);
    expect(after.said.at(-1)).toBe("I'm sorry, I don't have an answer to that. Is there anything else I can help you with?");
  }, 90_000);

  it("refuses another account's knowledge base on an agent", async () => {
    const other = await app.account();
    const theirs = await knowledgeBase(app, other.key);
    const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "x", system_prompt: "x", voice_id: "openai-alloy", knowledge_base_ids: [theirs.id] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "knowledge_base_not_found" });
    expect(JSON.stringify(res.body)).toContain("knowledge_base_ids[0]");
  }, 30_000);
});

describe("a chat model agent with a knowledge base", () => {
  let world: Awaited<ReturnType<typeof startStandinApp>>;
  let app: TestApp;
  let acct: TestAccount;
  /** The stand-in model answers with the first passage its prompt was given, or says it does not know. */
  const model = (request: ChatRequest): StandinReply => {
    if (request.response_format) return { text: "{}" };
    const passage = /\[1\] \(([^)]+)\) ([^.]*\.)/.exec(String(request.messages[0]?.content ?? ""));
    return { text: passage ? `${passage[1]}: ${passage[2]}` : "I do not know." };
  };
  beforeAll(async () => {
    world = await startStandinApp({ chatReply: model, callerSays: () => callerSays });
    ({ app, acct } = world);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it("gets the passages matching the caller's words in its prompt, turn by turn", async () => {
    const kb = await knowledgeBase(app, acct.key);
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Front desk", system_prompt: "You answer for Acme Dental.", voice_id: "openai-alloy", first_message: GREETING, knowledge_base_ids: [kb.id] },
    });
    callerSays = ["how much is a teeth whitening", "do you sell pizza"];
    const { said } = await call(app, acct, agent.body.id);
    expect(said).toEqual([GREETING, "prices.txt: A teeth whitening costs 300 dollars.", "I do not know."]);
  }, 90_000);
});
