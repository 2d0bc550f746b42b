import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventsRepository } from "../../src/db/repositories/events.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// POST /v1/calls places real calls through the simulator carrier: the engine's agent talks
// with a scripted callee speaking fixture audio over a simulated 8 kHz line.

const GREETING = "Hello, this is Ava from Acme Dental.";
const ENDED = ["completed", "transferred", "failed", "no_answer", "busy"];

/** The date "tuesday" means in the fixture line day-and-time (the next Tuesday, never today). */
function nextTuesday(): string {
  const d = new Date();
  const ahead = (2 - d.getUTCDay() + 7) % 7 || 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + ahead)).toISOString().slice(0, 10);
}

let app: TestApp;

beforeAll(async () => {
  // Agency accounts get one concurrent call here, to watch the queue work.
  app = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_PLAN_AGENCY_CONCURRENT_CALLS: "1" });
}, 60_000);

afterAll(async () => {
  await app?.close();
});

async function caller(plan: "pro" | "agency" = "pro"): Promise<TestAccount & { agentId: string }> {
  const account = await app.account({ plan, credits: 100 });
  await app.parley.services.phoneNumbers.add(account.id, { phone_number: `+1650555${String(1000 + Math.floor(Math.random() * 8999))}`, country: "US" } as never);
  const agent = await app.request("POST", "/v1/agents", {
    key: account.key,
    body: { name: "Ava", system_prompt: "You call patients of Acme Dental.", voice_id: "flite-kal", first_message: GREETING, metadata: { business_name: "Acme Dental", opening_hours: "nine to five on weekdays" } },
  });
  expect(agent.status).toBe(201);
  return { ...account, agentId: agent.body.id };
}

async function place(who: { key: string; agentId: string }, phone: string): Promise<string> {
  const res = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: phone, agent_id: who.agentId } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.status).toBe("queued");
  return res.body.id;
}

async function read(who: { key: string }, id: string): Promise<any> {
  return (await app.request("GET", `/v1/calls/${id}?include=transcript,recording`, { key: who.key })).body;
}

/** The call's events in the outbox, oldest first. */
async function events(id: string) {
  return new EventsRepository(app.parley.services.db).forCall(id);
}

async function until(who: { key: string }, id: string, done: (call: any) => boolean, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const call = await read(who, id);
    if (done(call)) return call;
    if (Date.now() > deadline) throw new Error(`call ${id} stuck in ${call.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Each test has its own account, so they run side by side, as calls of different accounts do.
describe.concurrent("outbound calls through the simulator", () => {
  it("end busy, no_answer and failed for the magic numbers, unbilled", async () => {
    const who = await caller();
    const outcomes = await Promise.all(
      [
        ["+15005550001", "busy"],
        ["+15005550002", "no_answer"],
        ["+15005550003", "failed"],
      ].map(async ([phone, status]) => {
        const call = await until(who, await place(who, phone!), (c) => ENDED.includes(c.status));
        return [call.id, call.status, call.duration, call.answered_at, status];
      }),
    );
    for (const [id, got, duration, answeredAt, want] of outcomes) {
      expect(got).toBe(want);
      expect(duration).toBeNull();
      expect(answeredAt).toBeNull();
      // call.failed stands for failed, busy and no_answer, with the status in its data.
      const emitted = await events(id);
      expect(emitted.map((e) => e.name)).toEqual(["call.started", "call.ringing", "call.failed"]);
      expect(emitted[2]!.data).toMatchObject({ call_id: id, status: want, duration_seconds: 0 });
    }
    expect((await app.request("GET", "/v1/account", { key: who.key })).body.credit_balance).toBe(100);
  }, 60_000);

  it("connects other numbers: ringing, in_progress, then completed with transcript, recording and charge", async () => {
    const who = await caller();
    const id = await place(who, "+14155550123");
    const live = await until(who, id, (c) => c.status === "in_progress");
    expect(live.answered_at).not.toBeNull();
    const call = await until(who, id, (c) => ENDED.includes(c.status));
    expect(call.status).toBe("completed");
    expect(call.duration).toBeGreaterThan(0);
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    const heard = call.transcript.filter((s: any) => s.role === "user").map((s: any) => s.content).join(" | ");
    expect(heard).toMatch(/hours/);
    expect(call.recording_url).toMatch(/\/recording\?expires=/);
    const balance = (await app.request("GET", "/v1/account", { key: who.key })).body.credit_balance;
    expect(balance).toBe(100 - Math.ceil(call.duration / 60));
    const emitted = await events(id);
    expect(emitted.map((e) => e.name)).toEqual(["call.started", "call.ringing", "call.answered", "call.completed", "call.transcript.ready", "call.recording.ready"]);
    expect(emitted[3]!.data).toMatchObject({
      call_id: id,
      agent_id: who.agentId,
      phone_number: "+14155550123",
      direction: "outbound",
      duration_seconds: call.duration,
      extracted_data: {},
    });
    expect(emitted[3]!.data.transcript).toMatch(new RegExp(`^Agent: ${GREETING}\nCaller: `));
    expect(emitted[5]!.data.recording_url).toMatch(/\/recording\?expires=/);
  }, 90_000);

  it("hand the callee to a human when asked: the agent speaks its transfer message and the call ends transferred", async () => {
    const who = await caller();
    const agent = await app.request("PATCH", `/v1/agents/${who.agentId}`, {
      key: who.key,
      body: { transfer_enabled: true, transfer_number: "+14155550100", transfer_message: "Please hold while I transfer you to our front desk." },
    });
    expect(agent.status).toBe(200);
    const res = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550126", agent_id: who.agentId, metadata: { simulator_script: ["speak-to-human"] } } });
    const call = await until(who, res.body.id, (c) => ENDED.includes(c.status));
    expect(call.status).toBe("transferred");
    expect(call.transcript.map((s: any) => s.content).join(" ")).toMatch(/transfer you to our front desk/);
    const transferred = (await events(call.id)).find((e) => e.name === "call.transferred");
    expect(transferred?.data).toMatchObject({ call_id: call.id, status: "transferred", outcome: "transferred", transfer_number: "+14155550100" });
  }, 90_000);

  it("refuse transfer numbers outside the account's countries: 400 when saved, and no hand-off on a call", async () => {
    const who = await caller();
    const refused = await app.request("PATCH", `/v1/agents/${who.agentId}`, { key: who.key, body: { transfer_enabled: true, transfer_number: "+882345678901" } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: "invalid_phone_number" });
    expect(refused.body.error.message).toMatch(/transfer_number/);
    // An agent saved before the account had numbers is checked again on every call.
    const fresh = await app.account({ credits: 100 });
    const agent = await app.request("POST", "/v1/agents", {
      key: fresh.key,
      body: { name: "Ava", system_prompt: "You call patients.", voice_id: "flite-kal", first_message: GREETING, transfer_enabled: true, transfer_number: "+882345678901" },
    });
    expect(agent.status).toBe(201);
    await app.parley.services.phoneNumbers.add(fresh.id, { phone_number: "+16505559876", country: "US" } as never);
    const res = await app.request("POST", "/v1/calls", { key: fresh.key, body: { phone_number: "+14155550128", agent_id: agent.body.id, metadata: { simulator_script: ["speak-to-human"] } } });
    expect(res.status).toBe(200);
    const call = await until(fresh, res.body.id, (c) => ENDED.includes(c.status));
    expect(call.status).toBe("completed");
    expect(call.transcript.map((s: any) => s.content).join(" ")).toMatch(/can't transfer you/);
    expect((await events(call.id)).map((e) => e.name)).not.toContain("call.transferred");
  }, 90_000);

  it("refuse a booking whose time the agent's calendar has taken, offering the nearest free times instead", async () => {
    const who = await caller();
    const taken = await app.parley.services.appointments.create({ account_id: who.id, agent_id: who.agentId, date: nextTuesday(), time: "15:00", customer_name: "Someone Else" });
    const script = ["book-appointment", "service-cleaning", "day-and-time", "my-name", "yes-please", "goodbye"];
    const res = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550129", agent_id: who.agentId, metadata: { simulator_script: script } } });
    const call = await until(who, res.body.id, (c) => ENDED.includes(c.status), 90_000);
    const agentSaid = call.transcript.filter((s: any) => s.role === "agent").map((s: any) => s.content).join(" ");
    expect(agentSaid).toMatch(/at 3:00 PM isn't available\. The nearest free times are \w+day, \w+ \d+ at 3:30 PM or 4:00 PM\./);
    expect(agentSaid).not.toMatch(/is booked for/);
    // Nothing was stored for this call; the appointment that held the time is untouched.
    expect((await app.request("GET", `/v1/appointments?call_id=${call.id}`, { key: who.key })).body.total).toBe(0);
    expect((await app.parley.services.appointments.get(who.id, taken.id)).status).toBe("scheduled");
  }, 120_000);

  it("fail a call whose simulator script names no fixture line", async () => {
    const who = await caller();
    const res = await app.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550127", agent_id: who.agentId, metadata: { simulator_script: ["no-such-line"] } } });
    const call = await until(who, res.body.id, (c) => ENDED.includes(c.status));
    expect(call.status).toBe("failed");
    expect(call.answered_at).toBeNull();
  }, 30_000);

  it("wait in queued while the account is at its concurrent-call limit, and start when a slot frees", async () => {
    const who = await caller("agency");
    const first = await place(who, "+14155550124");
    const second = await place(who, "+14155550125");
    await until(who, first, (c) => c.status === "in_progress");
    expect((await read(who, second)).status).toBe("queued");
    const firstDone = await until(who, first, (c) => ENDED.includes(c.status));
    expect(firstDone.status).toBe("completed");
    const secondDone = await until(who, second, (c) => ENDED.includes(c.status), 90_000);
    expect(secondDone.status).toBe("completed");
    expect(Date.parse(secondDone.answered_at)).toBeGreaterThanOrEqual(Date.parse(firstDone.ended_at));
  }, 150_000);
});
