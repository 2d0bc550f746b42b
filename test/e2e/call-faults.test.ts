import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NativeMediaClient } from "../helpers/media-client.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let acct: TestAccount;
let wsBase: string;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" });
  wsBase = app.baseUrl.replace(/^http/, "ws");
  acct = await app.account({ credits: 100 });
}, 60_000);

afterAll(async () => {
  await app?.close();
});

async function createAgent(name: string): Promise<string> {
  const res = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name, system_prompt: "You answer for Acme Dental.", voice_id: "flite-slt", first_message: "Hello, Acme Dental." },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function callStatus(callId: string): Promise<string> {
  return (await app.request("GET", `/v1/calls/${callId}`, { key: acct.key })).body.status;
}

async function waitForStatus(callId: string, wanted: (status: string) => boolean, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await callStatus(callId);
    if (wanted(status) || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("faults in one call stay in that call", () => {
  it("a database error storing one call's end neither crashes the process nor touches the other calls; the end is stored once the database works again", async () => {
    const steadyAgent = await createAgent("Steady");
    const doomedAgent = await createAgent("Doomed");
    // A real SQLite error, injected for the doomed agent's calls only: ending them is refused.
    await sql
      .raw(
        `CREATE TRIGGER fail_doomed_end BEFORE UPDATE OF status ON calls
         WHEN NEW.agent_id = '${doomedAgent}' AND NEW.status <> 'in_progress'
         BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
      )
      .execute(app.parley.services.db);

    const steady = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${steadyAgent}`, acct.key, 16000);
    const steadyId: string = (await steady.waitFor((m) => m.type === "connected")).call_id;
    steady.startStreaming();
    const doomed = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${doomedAgent}`, acct.key, 16000);
    const doomedId: string = (await doomed.waitFor((m) => m.type === "connected")).call_id;
    doomed.startStreaming();
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
  }, 60_000);
});
