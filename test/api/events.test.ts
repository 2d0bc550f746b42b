import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Which change emits which event, written with the change, delivered to subscribed webhooks
// only, and read back with GET /v1/events.

let app: TestApp;
const agentBody = { name: "Front desk", system_prompt: "Answer politely.", voice_id: "flite-slt" };

beforeAll(async () => {
  // No receiver listens: deliveries are written and fail, which these tests do not look at.
  app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0", PARLEY_WEBHOOK_RETRY_SCHEDULE: "none" });
});
afterAll(() => app.close());

/** The account's events, oldest first, as name and data. */
async function eventsOf(account: TestAccount): Promise<Array<{ event: string; data: any }>> {
  const res = await app.request("GET", "/v1/events?order=asc&limit=100", { key: account.key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.map((e: any) => ({ event: e.event, data: e.data }));
}

/** A webhook subscribed to `events`; returns a function listing the events it got deliveries of. */
async function subscriber(account: TestAccount, events: string[]): Promise<() => Promise<string[]>> {
  const hook = await app.request("POST", "/v1/webhooks", { key: account.key, body: { url: "http://127.0.0.1:9/hook", events } });
  expect(hook.status).toBe(201);
  return async () => {
    const rows = await app.parley.services.db.selectFrom("deliveries").select(["event_name"]).where("webhook_id", "=", hook.body.id).orderBy("created_at").execute();
    return rows.map((r) => r.event_name);
  };
}

describe("agent events", () => {
  it("agent.created, agent.updated (with the changed fields) and agent.deleted, to subscribed webhooks only", async () => {
    const acct = await app.account();
    const agentsOnly = await subscriber(acct, ["agent.created", "agent.deleted"]);
    const callsOnly = await subscriber(acct, ["call.completed"]);
    const created = await app.request("POST", "/v1/agents", { key: acct.key, body: agentBody });
    expect((await app.request("PATCH", `/v1/agents/${created.body.id}`, { key: acct.key, body: { name: "Reception", temperature: 0.2 } })).status).toBe(200);
    expect((await app.request("DELETE", `/v1/agents/${created.body.id}`, { key: acct.key })).status).toBe(200);

    const events = await eventsOf(acct);
    expect(events.map((e) => e.event)).toEqual(["agent.created", "agent.updated", "agent.deleted"]);
    expect(events[0]!.data).toEqual({
      id: created.body.id,
      name: "Front desk",
      voice_id: "flite-slt",
      language: created.body.language,
      model: created.body.model,
      status: "active",
      metadata: created.body.metadata,
      created_at: created.body.created_at,
      updated_at: created.body.updated_at,
    });
    expect(events[1]!.data).toMatchObject({ id: created.body.id, name: "Reception", changed: ["name", "temperature"] });
    expect(events[2]!.data).toMatchObject({ id: created.body.id, deleted: true, status: "inactive", deleted_at: expect.any(String) });
    expect(await agentsOnly()).toEqual(["agent.created", "agent.deleted"]);
    expect(await callsOnly()).toEqual([]);
  });

  it("a refused change leaves no event", async () => {
    const acct = await app.account();
    await app.parley.services.accounts.setLimits(acct.id, { agents: 1 });
    expect((await app.request("POST", "/v1/agents", { key: acct.key, body: agentBody })).status).toBe(201);
    expect((await app.request("POST", "/v1/agents", { key: acct.key, body: agentBody })).status).toBe(402);
    const [agent] = (await app.request("GET", "/v1/agents", { key: acct.key })).body.data;
    expect((await app.request("PATCH", `/v1/agents/${agent.id}`, { key: acct.key, body: { voice_id: "no-such-voice" } })).status).toBe(400);
    expect((await eventsOf(acct)).map((e) => e.event)).toEqual(["agent.created"]);
  });
});

describe("phone number events", () => {
  it("assigned when a number becomes active or gets another default agent, released when an active one stops", async () => {
    const acct = await app.account();
    const agent = (await app.request("POST", "/v1/agents", { key: acct.key, body: agentBody })).body;
    const numbers = app.parley.services.phoneNumbers;
    const added = await numbers.add(acct.id, { phone_number: "+16505550111", country: "US" } as never);
    const claim = await app.request("POST", "/v1/phone-numbers", { key: acct.key, body: { phone_number: "+16505550112", country: "US" } });
    expect(claim.body.status).toBe("pending");
    await app.approveNumber(claim.body.id);
    const patch = (id: string, body: object) => app.request("PATCH", `/v1/phone-numbers/${id}`, { key: acct.key, body });
    expect((await patch(added.id, { default_agent_id: agent.id })).status).toBe(200);
    expect((await patch(added.id, { default_agent_id: agent.id, friendly_name: "Main line" })).status).toBe(200);
    expect((await patch(added.id, { status: "inactive" })).status).toBe(200);
    expect((await patch(added.id, { status: "active" })).status).toBe(200);
    await numbers.reject(claim.body.id);
    // A pending claim withdrawn was never assigned: nothing to release.
    const withdrawn = await app.request("POST", "/v1/phone-numbers", { key: acct.key, body: { phone_number: "+16505550113", country: "US" } });
    expect((await patch(withdrawn.body.id, { status: "inactive" })).status).toBe(200);

    const events = (await eventsOf(acct)).filter((e) => e.event.startsWith("phone_number."));
    expect(events.map((e) => [e.event, e.data.phone_number, e.data.status, e.data.default_agent_id])).toEqual([
      ["phone_number.assigned", "+16505550111", "active", null],
      ["phone_number.assigned", "+16505550112", "active", null],
      ["phone_number.assigned", "+16505550111", "active", agent.id],
      ["phone_number.released", "+16505550111", "inactive", agent.id],
      ["phone_number.assigned", "+16505550111", "active", agent.id],
      ["phone_number.released", "+16505550112", "inactive", null],
    ]);
    expect(events[0]!.data).toEqual({ id: added.id, phone_number: "+16505550111", friendly_name: "+16505550111", country: "US", status: "active", default_agent_id: null, updated_at: expect.any(String) });
  });
});

describe("appointment events", () => {
  it("appointment.created with exactly the reference's fields, then updated and cancelled with the status", async () => {
    const acct = await app.account();
    const booked = await app.parley.services.appointments.create({
      account_id: acct.id,
      customer_name: "Ada Lovelace",
      customer_phone: "+14155550123",
      date: "2026-12-01",
      time: "10:30",
      service: "cleaning",
    });
    expect((await app.request("PATCH", `/v1/appointments/${booked.id}`, { key: acct.key, body: { time: "11:00" } })).status).toBe(200);
    expect((await app.request("POST", `/v1/appointments/${booked.id}/cancel`, { key: acct.key })).status).toBe(200);
    expect((await app.request("POST", `/v1/appointments/${booked.id}/cancel`, { key: acct.key })).status).toBe(409);

    const events = await eventsOf(acct);
    expect(events.map((e) => e.event)).toEqual(["appointment.created", "appointment.updated", "appointment.cancelled"]);
    expect(events[0]!.data).toEqual({
      appointment_id: booked.id,
      call_id: null,
      customer_name: "Ada Lovelace",
      customer_phone: "+14155550123",
      customer_email: null,
      date: "2026-12-01",
      time: "10:30",
      service: "cleaning",
      duration_minutes: booked.duration_minutes,
      notes: null,
    });
    expect(events[1]!.data).toMatchObject({ appointment_id: booked.id, time: "11:00", status: "scheduled" });
    expect(events[2]!.data).toMatchObject({ appointment_id: booked.id, time: "11:00", status: "cancelled" });
  });
});

describe("credits.low", () => {
  it("fires once per crossing below the account's threshold (the configured 10 by default, or its own)", async () => {
    const acct = await app.account({ credits: 12 });
    const lows = await subscriber(acct, ["credits.low"]);
    const { accounts } = app.parley.services;
    for (const amount of [-1, -2, -1, 5, -4, -1]) await accounts.addCredits(acct.id, amount);
    // 12 -> 11 -> 9 (crossed) -> 8 -> 13 -> 9 (crossed again) -> 8
    const events = (await eventsOf(acct)).filter((e) => e.event === "credits.low");
    expect(events.map((e) => e.data)).toEqual([
      { balance: 9, threshold: 10, call_id: null },
      { balance: 9, threshold: 10, call_id: null },
    ]);
    expect(await lows()).toEqual(["credits.low", "credits.low"]);

    expect(await accounts.setLowBalanceThreshold(acct.id, 100)).toBe(100);
    await accounts.addCredits(acct.id, 200);
    await accounts.addCredits(acct.id, -150);
    const last = (await eventsOf(acct)).filter((e) => e.event === "credits.low").at(-1);
    expect(last!.data).toEqual({ balance: 58, threshold: 100, call_id: null });
    expect(await accounts.setLowBalanceThreshold(acct.id, null)).toBe(10);
  });
});

describe("GET /v1/events", () => {
  it("lists the caller's events newest first, with sequence numbers, filtered by name and time, paged by cursor", async () => {
    const acct = await app.account();
    for (let i = 0; i < 3; i++) await app.request("POST", "/v1/agents", { key: acct.key, body: { ...agentBody, name: `Agent ${i}` } });
    await app.parley.services.accounts.addCredits(acct.id, -95);

    const all = await app.request("GET", "/v1/events", { key: acct.key });
    expect(all.body).toMatchObject({ total: 4, has_more: false });
    expect(all.body.data.map((e: any) => e.event)).toEqual(["credits.low", "agent.created", "agent.created", "agent.created"]);
    const sequences = all.body.data.map((e: any) => e.sequence);
    expect([...sequences].sort((a, b) => b - a)).toEqual(sequences);
    expect(all.body.data[0]).toEqual({ id: expect.stringMatching(/^evt_/), event: "credits.low", sequence: expect.any(Number), timestamp: expect.any(String), call_id: null, data: { balance: 5, threshold: 10, call_id: null }, withheld: [] });

    expect((await app.request("GET", "/v1/events?name=agent.created&limit=2", { key: acct.key })).body).toMatchObject({ total: 3, has_more: true });
    const page = await app.request("GET", "/v1/events?name=agent.created&limit=2", { key: acct.key });
    const rest = await app.request("GET", `/v1/events?name=agent.created&limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`, { key: acct.key });
    expect([...page.body.data, ...rest.body.data].map((e: any) => e.data.name).sort()).toEqual(["Agent 0", "Agent 1", "Agent 2"]);
    // from_date is inclusive, to_date exclusive.
    const last = encodeURIComponent(all.body.data[0].timestamp);
    expect((await app.request("GET", `/v1/events?from_date=${last}`, { key: acct.key })).body.data.map((e: any) => e.event)).toEqual(["credits.low"]);
    expect((await app.request("GET", `/v1/events?to_date=${last}`, { key: acct.key })).body.total).toBe(3);

    const one = await app.request("GET", `/v1/events/${all.body.data[0].id}`, { key: acct.key });
    expect(one.body).toEqual(all.body.data[0]);
  });

  it("refuses unknown names and bad times naming the field, other accounts' events, and keys without webhooks:read", async () => {
    const acct = await app.account();
    await app.request("POST", "/v1/agents", { key: acct.key, body: agentBody });
    const [event] = (await app.request("GET", "/v1/events", { key: acct.key })).body.data;
    const bad = await app.request("GET", "/v1/events?name=agent.exploded", { key: acct.key });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).message).toContain("name");
    expect(errorOf(await app.request("GET", "/v1/events?from_date=yesterday", { key: acct.key })).message).toContain("from_date");
    expect(errorOf(await app.request("GET", "/v1/events/evt_unknown", { key: acct.key })).code).toBe("event_not_found");

    const stranger = await app.account();
    expect((await app.request("GET", "/v1/events", { key: stranger.key })).body.data).toEqual([]);
    expect(errorOf(await app.request("GET", `/v1/events/${event.id}`, { key: stranger.key })).code).toBe("unauthorized");
    const agentsReader = await app.key(acct.id, ["agents:read"]);
    expect((await app.request("GET", "/v1/events", { key: agentsReader })).status).toBe(403);
    const webhooksReader = await app.key(acct.id, ["webhooks:read"]);
    expect((await app.request("GET", "/v1/events", { key: webhooksReader })).status).toBe(200);
  });
});

describe("what of an event a key reads back", () => {
  const TRANSCRIPT = [
    { role: "agent" as const, content: "Hello, this is Ava from Acme Dental.", timestamp: 0 },
    { role: "user" as const, content: "my name is zebulon quaxworth and my card number is four two four two", timestamp: 2 },
  ];
  const CALL_CONTENT = ["transcript", "recording_url", "extracted_data", "summary", "sentiment"];
  const APPOINTMENT_CONTENT = ["customer_name", "customer_phone", "customer_email", "service", "notes"];

  it("call content needs calls:read and appointment content appointments:read, besides webhooks:read", async () => {
    const acct = await app.account();
    const agent = (await app.request("POST", "/v1/agents", { key: acct.key, body: agentBody })).body;
    const { services } = app.parley;
    const call = await services.liveCalls.begin({
      account: (await services.accounts.find(acct.id))!,
      agent: await services.agents.get(acct.id, agent.id),
      direction: "web",
      phoneNumber: null,
      fromNumber: null,
      record: false,
      maxDuration: 600,
      metadata: {},
      context: {},
    });
    await services.liveCalls.end(call.id, { status: "completed", durationMs: 5_000, transcript: TRANSCRIPT, recordingPath: null, endReason: "caller_hangup" });
    await services.appointments.create({ account_id: acct.id, customer_name: "Zebulon Quaxworth", customer_phone: "+14155550123", customer_email: "zq@example.com", date: "2026-12-01", time: "10:30", service: "root canal", notes: "nervous" });

    const read = async (permissions: string[]) => {
      const key = await app.key(acct.id, permissions);
      const list = await app.request("GET", "/v1/events?limit=100", { key });
      expect(list.status, JSON.stringify(list.body)).toBe(200);
      const byName = (name: string) => list.body.data.find((e: any) => e.event === name);
      const completed = byName("call.completed");
      const one = await app.request("GET", `/v1/events/${completed.id}`, { key });
      expect(one.body).toEqual(completed);
      return { completed, transcriptReady: byName("call.transcript.ready"), appointment: byName("appointment.created"), started: byName("call.started"), text: JSON.stringify(list.body) };
    };

    const watcher = await read(["webhooks:read"]);
    expect(watcher.text).not.toMatch(/quaxworth/i);
    expect(watcher.text).not.toContain("four two four two");
    expect(watcher.text).not.toContain("root canal");
    expect(watcher.completed.withheld).toEqual(CALL_CONTENT);
    for (const field of CALL_CONTENT) expect(watcher.completed.data).not.toHaveProperty(field);
    expect(watcher.completed.data).toMatchObject({ call_id: call.id, status: "completed", duration_seconds: 5 });
    expect(watcher.transcriptReady.withheld).toEqual(["transcript"]);
    expect(watcher.appointment.withheld).toEqual(APPOINTMENT_CONTENT);
    expect(watcher.appointment.data).toMatchObject({ date: "2026-12-01", time: "10:30" });
    // Nothing to withhold: the field is there, empty.
    expect(watcher.started.withheld).toEqual([]);

    const callsToo = await read(["webhooks:read", "calls:read"]);
    expect(callsToo.completed.withheld).toEqual([]);
    expect(callsToo.completed.data.transcript).toContain("zebulon quaxworth");
    expect(callsToo.appointment.withheld).toEqual(APPOINTMENT_CONTENT);

    const appointmentsToo = await read(["webhooks:write", "appointments:write"]);
    expect(appointmentsToo.completed.withheld).toEqual(CALL_CONTENT);
    expect(appointmentsToo.appointment.withheld).toEqual([]);
    expect(appointmentsToo.appointment.data).toMatchObject({ customer_name: "Zebulon Quaxworth", service: "root canal", notes: "nervous" });

    const everything = await read(["*"]);
    expect(everything.completed.withheld).toEqual([]);
    expect(everything.appointment.data.customer_email).toBe("zq@example.com");
  });
});
