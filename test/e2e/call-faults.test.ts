import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SILENCE_TIMEOUT_LINE } from "../../engine/call-session.js";
import { CREDIT_EXHAUSTED_LINE } from "../../src/telephony/credit-watch.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

/** Silence that ends a call in these tests (30 s by default). */
const SILENCE_TIMEOUT_MS = 4_000;
/** A greeting that lasts well over a minute: the agent is never silent long enough to time out. */
const MONOLOGUE = Array.from(
  { length: 12 },
  (_, i) => `This is part ${i + 1} of a long announcement from Acme Dental about our opening hours, our services, our prices and our team, read slowly and in full.`,
).join(" ");

let app: TestApp;
let acct: TestAccount;
let wsBase: string;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_CALL_CAPACITY: "4", PARLEY_SILENCE_TIMEOUT_MS: String(SILENCE_TIMEOUT_MS) });
  wsBase = app.baseUrl.replace(/^http/, "ws");
  acct = await app.account({ credits: 100 });
}, 60_000);

afterAll(async () => {
  await app?.close();
});

async function createAgent(name: string, firstMessage = "Hello, Acme Dental.", owner = acct): Promise<string> {
  const res = await app.request("POST", "/v1/agents", {
    key: owner.key,
    body: { name, system_prompt: "You answer for Acme Dental.", voice_id: "flite-slt", first_message: firstMessage },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function callStatus(callId: string, owner = acct): Promise<string> {
  return (await app.request("GET", `/v1/calls/${callId}`, { key: owner.key })).body.status;
}

async function waitForStatus(callId: string, wanted: (status: string) => boolean, timeoutMs: number, owner = acct): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await callStatus(callId, owner);
    if (wanted(status) || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Opens a web call to `agent` as `owner` (refused: rejects with the upgrade's status and body). */
function connect(agent: string, owner: TestAccount): Promise<NativeMediaClient> {
  return NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agent}`, owner.key, 16000);
}

/** A connected web call whose client streams audio (silence) as a phone line does. */
async function startCall(agent: string, owner = acct): Promise<{ client: NativeMediaClient; callId: string }> {
  const client = await connect(agent, owner);
  const callId: string = (await client.waitFor((m) => m.type === "connected")).call_id;
  client.startStreaming();
  return { client, callId };
}

/** Resolves once every call of the tests before has given its engine slot back (its end is stored). */
async function engineIdle(): Promise<void> {
  const gateway = app.parley.media!.gateway;
  const deadline = Date.now() + 10_000;
  while (gateway.slotsHeld > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(gateway.slotsHeld).toBe(0);
}

/** The stored call once it has ended. */
async function endedCall(callId: string, owner: TestAccount, timeoutMs: number) {
  await waitForStatus(callId, (s) => s !== "in_progress", timeoutMs, owner);
  return (await app.request("GET", `/v1/calls/${callId}?include=transcript`, { key: owner.key })).body;
}

describe("faults in one call stay in that call", () => {
  it("a database error storing one call's end neither crashes the process nor touches the other calls; the end is stored once the database works again", async () => {
    const steadyAgent = await createAgent("Steady", MONOLOGUE);
    const doomedAgent = await createAgent("Doomed");
    // A real SQLite error, injected for the doomed agent's calls only: ending them is refused.
    await sql
      .raw(
        `CREATE TRIGGER fail_doomed_end BEFORE UPDATE OF status ON calls
         WHEN NEW.agent_id = '${doomedAgent}' AND NEW.status <> 'in_progress'
         BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
      )
      .execute(app.parley.services.db);

    const { client: steady, callId: steadyId } = await startCall(steadyAgent);
    const { client: doomed, callId: doomedId } = await startCall(doomedAgent);
    await doomed.waitFor((m) => m.type === "transcript");

    doomed.hangUp();
    await doomed.closed;
    // The first attempt to store the end fails; the database heals a moment later.
    await new Promise((r) => setTimeout(r, 300));
    expect(await callStatus(doomedId)).toBe("in_progress");
    await sql.raw("DROP TRIGGER fail_doomed_end").execute(app.parley.services.db);
    expect(await waitForStatus(doomedId, (s) => s !== "in_progress", 20_000)).toBe("completed");

    // The other call went on all along, and ends normally.
    expect(await callStatus(steadyId)).toBe("in_progress");
    expect(steady.closeCode).toBeUndefined();
    steady.hangUp();
    expect(await waitForStatus(steadyId, (s) => s !== "in_progress", 10_000)).toBe("completed");
    await engineIdle();
  }, 60_000);
});

describe("the engine's capacity is shared between accounts", () => {
  it("one account's idle calls cannot take every recognizer: past its share it is refused 429, another account still gets in, a full engine says 503", async () => {
    // A box that carries 4 calls (PARLEY_CALL_CAPACITY) and several accounts: each may hold 2.
    const greedy = await app.account({ credits: 100 });
    const other = await app.account({ credits: 100 });
    const greedyAgent = await createAgent("Greedy", MONOLOGUE, greedy);
    const otherAgent = await createAgent("Other", MONOLOGUE, other);
    const held = [await connect(greedyAgent, greedy), await connect(greedyAgent, greedy)];
    const refused = await connect(greedyAgent, greedy).catch((err: any) => err);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "rate_limit_exceeded", message: expect.stringContaining("2 of the engine's 4 call slots") });

    held.push(await connect(otherAgent, other), await connect(otherAgent, other));
    const third = await app.account({ credits: 100 });
    const full = await connect(await createAgent("Late", MONOLOGUE, third), third).catch((err: any) => err);
    expect(full.status).toBe(503);
    expect(full.body.error.code).toBe("engine_at_capacity");

    // A slot frees when its call ends: the greedy account may call again.
    const first = held.shift()!;
    const firstId: string = (await first.waitFor((m) => m.type === "connected")).call_id;
    first.hangUp();
    expect(await waitForStatus(firstId, (s) => s !== "in_progress", 10_000, greedy)).toBe("completed");
    held.push(await connect(greedyAgent, greedy));
    for (const client of held) client.hangUp();
    await Promise.all(held.map((c) => c.closed));
    // The calls side by side below need the slots these calls are still giving back.
    await engineIdle();
  }, 60_000);
});

// These calls last a minute and ten seconds: they run side by side.
describe("calls nobody can pay for or nobody speaks in end by themselves", () => {
  it.concurrent("a call whose account's credit runs out says goodbye and hangs up before the minute it cannot pay for", async () => {
    const poor = await app.account({ credits: 1 });
    const agent = await createAgent("Talkative", MONOLOGUE, poor);
    const { client, callId } = await startCall(agent, poor);
    const ended = await client.waitFor((m) => m.type === "ended", 0, 70_000);
    expect(ended.reason).toBe("credit_exhausted");
    const call = await endedCall(callId, poor, 10_000);
    expect(call.status).toBe("completed");
    // The check comes 15 s before the minute ends; the goodbye ends the call before it does.
    expect(call.duration).toBeGreaterThanOrEqual(44);
    expect(call.duration).toBeLessThanOrEqual(59);
    const agentLines = call.transcript.filter((s: any) => s.role === "agent").map((s: any) => s.content);
    expect(agentLines).toHaveLength(2);
    expect(MONOLOGUE.startsWith(agentLines[0]) && agentLines[0].length < MONOLOGUE.length).toBe(true);
    expect(agentLines[1]).toBe(CREDIT_EXHAUSTED_LINE);
    const account = await app.request("GET", "/v1/account", { key: poor.key });
    expect(account.body.credit_balance).toBe(0);
    await client.closed;
  }, 90_000);

  it.concurrent("a call in which nobody speaks is ended with a goodbye after the silence timeout", async () => {
    const quiet = await app.account({ credits: 10 });
    const agent = await createAgent("Patient", "Hello, Acme Dental.", quiet);
    const { client, callId } = await startCall(agent, quiet);
    const ended = await client.waitFor((m) => m.type === "ended", 0, 20_000);
    expect(ended.reason).toBe("silence_timeout");
    const call = await endedCall(callId, quiet, 10_000);
    expect(call.status).toBe("completed");
    expect(call.transcript.map((s: any) => s.content)).toEqual(["Hello, Acme Dental.", SILENCE_TIMEOUT_LINE]);
    expect(call.duration).toBeLessThan(15);
  }, 60_000);
});
