import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingFile } from "../../src/services/recording-files.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { until } from "../helpers/until.js";

// Calls run on session worker threads (two here). A worker that dies ends only its own calls,
// stored and billed as they stand, and a new worker takes its place.
let app: TestApp;
let acct: TestAccount;
let agentId: string;
let wsBase: string;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_SESSION_WORKERS: "2" });
  wsBase = app.baseUrl.replace(/^http/, "ws");
  acct = await app.account({ credits: 100 });
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello, this is the front desk." } });
  agentId = agent.body.id;
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** A silent caller whose greeting has been said in full (it is in the transcript). */
async function greetedCall(): Promise<{ client: NativeMediaClient; callId: string }> {
  const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key, 16000);
  const callId: string = (await client.waitFor((m) => m.type === "connected")).call_id;
  await client.waitFor((m) => m.type === "transcript" && m.role === "agent");
  return { client, callId };
}

const callOf = async (id: string) => (await app.request("GET", `/v1/calls/${id}?include=transcript,recording`, { key: acct.key })).body;

describe("session workers", () => {
  it("run calls on one thread per worker; a worker that dies ends only its calls, stored and billed as they stand, and is replaced", async () => {
    const workers = app.parley.media!.engine.workers;
    expect(workers.threadIds).toHaveLength(2);
    const first = await greetedCall();
    const second = await greetedCall();
    const doomedThread = workers.threadOf(first.callId)!;
    // The second call went to the worker with fewer calls: the other one.
    expect(workers.threadOf(second.callId)).not.toBe(doomedThread);
    const balanceBefore = (await app.request("GET", "/v1/account", { key: acct.key })).body.credit_balance;

    await workers.terminate(doomedThread);
    await first.client.closed;
    await until("the dead worker's call to be stored", async () => (await callOf(first.callId)).status !== "in_progress");
    const ended = await callOf(first.callId);
    expect(ended.status).toBe("failed");
    expect(ended.duration).toBeGreaterThan(0);
    // Its transcript so far is kept; its half-written recording is not left behind.
    expect(ended.transcript).toEqual([expect.objectContaining({ role: "agent", content: "Hello, this is the front desk." })]);
    expect(ended.recording_url).toBeNull();
    expect(existsSync(recordingFile(app.config.dataDir, first.callId))).toBe(false);
    // Billed for the minute it was connected.
    const balanceAfter = (await app.request("GET", "/v1/account", { key: acct.key })).body.credit_balance;
    expect(balanceAfter).toBe(balanceBefore - 1);

    // The other call goes on: it still answers, and ends normally.
    expect((await callOf(second.callId)).status).toBe("in_progress");
    await until("a new worker in the dead one's place", () => workers.threadIds.length === 2);
    expect(workers.threadIds).not.toContain(doomedThread);
    second.client.hangUp();
    await until("the other call to end", async () => (await callOf(second.callId)).status === "completed");

    // New calls run on the replacement too.
    const third = await greetedCall();
    const fourth = await greetedCall();
    expect(new Set([workers.threadOf(third.callId), workers.threadOf(fourth.callId)])).toEqual(new Set(workers.threadIds));
    third.client.hangUp();
    fourth.client.hangUp();
    await until("both calls to end", async () => (await callOf(third.callId)).status === "completed" && (await callOf(fourth.callId)).status === "completed");
  }, 90_000);
});
