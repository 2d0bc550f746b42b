import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { startParley, type Parley } from "../../src/main.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Appointment reminders on the schedulers' clock (a fake one here): planned when an
// appointment is booked or moved, sent once at their time, skipped when it was cancelled, and
// the reminder call queued when the agent asks for one.

const HOUR = 3_600_000;
let now = Date.parse("2030-02-27T12:00:00.000Z");

let app: TestApp;
let acct: TestAccount;

beforeAll(async () => {
  app = await startTestApp({}, {}, undefined, { clock: () => now });
  acct = await app.account();
  await app.activeNumber(acct.key, { phone_number: "+14155550100", country: "US" });
}, 30_000);
afterAll(() => app?.close());

async function agent(body: Record<string, unknown> = {}): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Ava", system_prompt: "You book.", voice_id: "flite-slt", ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const book = (agentId: string, extra: Record<string, unknown> = {}) =>
  app.parley.services.appointments.create({ account_id: acct.id, agent_id: agentId, date: "2030-03-01", time: "10:30", customer_name: "Ada Lee", customer_phone: "+14155550123", service: "cleaning", ...extra });

const read = async (id: string) => (await app.request("GET", `/v1/appointments/${id}`, { key: acct.key })).body;

/** Moves the clock to `at` and lets the worker look. */
async function at(instant: number): Promise<void> {
  now = instant;
  app.parley.services.reminders.wake();
  // The pass starts on a timer; then it is waited for (under load, on PostgreSQL, it took over 150 ms).
  await new Promise((r) => setTimeout(r, 150));
  await app.parley.services.reminders.idle();
}

const reminders = async (appointmentId: string) =>
  (await app.parley.services.db.selectFrom("events").selectAll().where("name", "=", "appointment.reminder").execute())
    .map((e) => JSON.parse(e.data) as Record<string, any>)
    .filter((d) => d.appointment_id === appointmentId);

describe("appointment reminders", () => {
  it("are planned the agent's lead time before the appointment, in its time zone, and sent once at that time", async () => {
    const agentId = await agent({ reminder_minutes_before: 60, metadata: { timezone: "America/New_York" } });
    const appointment = await book(agentId);
    // 10:30 in New York (UTC-5 in March 2030) is 15:30Z; an hour before, 14:30Z.
    expect(await read(appointment.id)).toMatchObject({ reminder_at: "2030-03-01T14:30:00.000Z", reminder_status: "pending", reminder_call_id: null });
    await at(Date.parse("2030-03-01T14:29:00.000Z"));
    expect(await reminders(appointment.id)).toEqual([]);
    await at(Date.parse("2030-03-01T14:30:00.000Z"));
    const sent = await reminders(appointment.id);
    expect(sent).toEqual([
      {
        appointment_id: appointment.id,
        call_id: null,
        customer_name: "Ada Lee",
        customer_phone: "+14155550123",
        customer_email: null,
        date: "2030-03-01",
        time: "10:30",
        service: "cleaning",
        duration_minutes: 30,
        notes: null,
        status: "scheduled",
        confirmed_at: null,
        reminder_minutes_before: 60,
      },
    ]);
    expect((await read(appointment.id)).reminder_status).toBe("sent");
    await at(now + HOUR);
    expect(await reminders(appointment.id)).toHaveLength(1);
  });

  it("default to a day before, and are skipped for an appointment cancelled meanwhile", async () => {
    const agentId = await agent();
    expect((await app.request("GET", `/v1/agents/${agentId}`, { key: acct.key })).body).toMatchObject({ reminder_minutes_before: 1440, reminder_call: false });
    now = Date.parse("2030-02-27T12:00:00.000Z");
    const appointment = await book(agentId, { date: "2030-03-05", time: "09:00" });
    expect((await read(appointment.id)).reminder_at).toBe("2030-03-04T09:00:00.000Z");
    expect((await app.request("POST", `/v1/appointments/${appointment.id}/cancel`, { key: acct.key })).status).toBe(200);
    expect((await read(appointment.id)).reminder_status).toBe("skipped");
    await at(Date.parse("2030-03-04T09:00:00.000Z"));
    expect(await reminders(appointment.id)).toEqual([]);
  });

  it("move with the appointment: a new day or time plans a new reminder, even after one was sent", async () => {
    now = Date.parse("2030-02-27T12:00:00.000Z");
    const agentId = await agent({ reminder_minutes_before: 30 });
    const appointment = await book(agentId, { date: "2030-03-06", time: "10:00" });
    await at(Date.parse("2030-03-06T09:30:00.000Z"));
    expect(await reminders(appointment.id)).toHaveLength(1);
    const moved = await app.request("PATCH", `/v1/appointments/${appointment.id}`, { key: acct.key, body: { date: "2030-03-07" } });
    expect(moved.body).toMatchObject({ reminder_at: "2030-03-07T09:30:00.000Z", reminder_status: "pending" });
    await at(Date.parse("2030-03-07T09:30:00.000Z"));
    const sent = await reminders(appointment.id);
    expect(sent.map((d) => d.date)).toEqual(["2030-03-06", "2030-03-07"]);
  });

  it("are none when the agent sends none or the lead time has already passed, and follow a change of the agent's lead", async () => {
    now = Date.parse("2030-02-27T12:00:00.000Z");
    const silent = await agent({ reminder_minutes_before: null });
    expect((await read((await book(silent)).id)).reminder_status).toBeNull();
    const agentId = await agent({ reminder_minutes_before: 1440 });
    // Booked 22 hours ahead with a day's lead: no reminder.
    const soon = await book(agentId, { date: "2030-02-28", time: "10:00" });
    expect(await read(soon.id)).toMatchObject({ reminder_at: null, reminder_status: null });
    // An hour's lead now fits.
    expect((await app.request("PATCH", `/v1/agents/${agentId}`, { key: acct.key, body: { reminder_minutes_before: 60 } })).status).toBe(200);
    expect(await read(soon.id)).toMatchObject({ reminder_at: "2030-02-28T09:00:00.000Z", reminder_status: "pending" });
    // And none at all when the agent stops sending them.
    await app.request("PATCH", `/v1/agents/${agentId}`, { key: acct.key, body: { reminder_minutes_before: null } });
    expect(await read(soon.id)).toMatchObject({ reminder_at: null, reminder_status: null });
  });

  it("queue a reminder call to the customer when the agent asks for one, or say why it could not be placed", async () => {
    now = Date.parse("2030-02-27T12:00:00.000Z");
    // The agent's zone stands for its customers' (a US number has several): 16:00 there is inside calling hours.
    const agentId = await agent({ reminder_minutes_before: 60, reminder_call: true, metadata: { timezone: "UTC" } });
    const appointment = await book(agentId, { date: "2030-03-08", time: "15:00" });
    const noPhone = await book(agentId, { date: "2030-03-08", time: "16:00", customer_phone: null });
    await app.parley.services.doNotCall.add(acct.id, "+14155550199");
    const listed = await book(agentId, { date: "2030-03-08", time: "17:00", customer_phone: "+14155550199" });
    await at(Date.parse("2030-03-08T16:00:00.000Z"));

    const [sent] = await reminders(appointment.id);
    expect(sent!.call_id).toMatch(/^call_/);
    expect((await read(appointment.id)).reminder_call_id).toBe(sent!.call_id);
    const call = await app.parley.services.calls.get(acct.id, sent!.call_id);
    expect(call).toMatchObject({
      status: "queued",
      direction: "outbound",
      phone_number: "+14155550123",
      from_number: "+14155550100",
      agent_id: agentId,
      appointment_id: appointment.id,
      metadata: { purpose: "appointment_reminder", appointment_id: appointment.id },
      context: { purpose: "appointment_reminder", customer_name: "Ada Lee", appointment: { id: appointment.id, date: "2030-03-08", time: "15:00", service: "cleaning" } },
    });
    expect((await reminders(noPhone.id))[0]).toMatchObject({ call_id: null, call_not_placed: "no_customer_phone" });
    expect((await reminders(listed.id))[0]).toMatchObject({ call_id: null, call_not_placed: "do_not_call" });
  });

  it("refuse settings that make no sense, naming the field", async () => {
    const bad = async (body: Record<string, unknown>) => {
      const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "A", system_prompt: "x", voice_id: "flite-slt", ...body } });
      expect(res.status).toBe(400);
      return errorOf(res).details.fields.map((f: { field: string }) => f.field);
    };
    expect(await bad({ reminder_minutes_before: 2 })).toEqual(["reminder_minutes_before"]);
    expect(await bad({ reminder_minutes_before: 10_081 })).toEqual(["reminder_minutes_before"]);
    expect(await bad({ reminder_minutes_before: 1.5 })).toEqual(["reminder_minutes_before"]);
    expect(await bad({ reminder_call: "yes" })).toEqual(["reminder_call"]);
    expect(await bad({ reminder_minutes_before: null, reminder_call: true })).toEqual(["reminder_call"]);
  });
});

describe("reminder calls cannot be aimed by the wrong key, nor ring at the wrong time or past a limit", () => {
  it("a key without calls:write changes neither the number nor, while the agent places reminder calls, the day and time", async () => {
    now = Date.parse("2030-02-27T12:00:00.000Z");
    const calling = await agent({ reminder_minutes_before: 60, reminder_call: true, metadata: { timezone: "UTC" } });
    const quiet = await agent({ reminder_minutes_before: 60 });
    const appointment = await book(calling, { date: "2030-03-11", time: "15:00" });
    const unrelated = await book(quiet, { date: "2030-03-11", time: "15:00" });
    const scheduler = await app.key(acct.id, ["appointments:write"]);
    const patch = (id: string, body: Record<string, unknown>, key = scheduler) => app.request("PATCH", `/v1/appointments/${id}`, { key, body });

    // The attack: the reminder call pointed at another number, due a minute from now.
    const redirected = await patch(appointment.id, { customer_phone: "+14155550177", date: "2030-02-27", time: "13:01" });
    expect(redirected.status).toBe(403);
    expect(errorOf(redirected)).toMatchObject({ code: "forbidden", details: { fields: [{ field: "customer_phone" }] } });
    const moved = await patch(appointment.id, { date: "2030-02-27", time: "13:01" });
    expect(moved.status).toBe(403);
    expect(errorOf(moved).message).toContain("calls:write");
    expect(errorOf(moved).details.fields.map((f: { field: string }) => f.field)).toEqual(["date", "time"]);
    expect(await read(appointment.id)).toMatchObject({ customer_phone: "+14155550123", date: "2030-03-11", time: "15:00", reminder_at: "2030-03-11T14:00:00.000Z" });

    // What chooses neither whom nor when the service calls stays open to it.
    expect((await patch(appointment.id, { customer_name: "Ada King", notes: "prefers mornings", customer_phone: "+14155550123", date: "2030-03-11" })).status).toBe(200);
    expect((await patch(unrelated.id, { date: "2030-03-12", time: "09:00" })).status).toBe(200);
    // A key that may place calls may aim this one too; clearing the number needs no more than appointments:write.
    const caller = await app.key(acct.id, ["appointments:write", "calls:write"]);
    expect((await patch(appointment.id, { customer_phone: "+14155550177", time: "16:00" }, caller)).status).toBe(200);
    expect((await patch(appointment.id, { customer_phone: null })).status).toBe(200);
  });

  it("an agent's reminder calls are turned on, widened or moved only by a key that may place calls", async () => {
    const builder = await app.key(acct.id, ["agents:write"]);
    const body = { name: "Ava", system_prompt: "You book.", voice_id: "flite-slt", reminder_minutes_before: 60 };
    const refusedFields = (res: { status: number; body: any }) => {
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(errorOf(res as never).code).toBe("forbidden");
      return errorOf(res as never).details.fields.map((f: { field: string }) => f.field);
    };
    expect(refusedFields(await app.request("POST", "/v1/agents", { key: builder, body: { ...body, reminder_call: true } }))).toEqual(["reminder_call"]);
    const quiet = await app.request("POST", "/v1/agents", { key: builder, body });
    expect(quiet.status).toBe(201);
    const patch = (id: string, change: Record<string, unknown>, key = builder) => app.request("PATCH", `/v1/agents/${id}`, { key, body: change });
    expect(refusedFields(await patch(quiet.body.id, { reminder_call: true }))).toEqual(["reminder_call"]);
    // Reminders without calls stay the agent builder's to set.
    expect((await patch(quiet.body.id, { reminder_minutes_before: 120, metadata: { timezone: "Europe/Paris" } })).status).toBe(200);

    const calling = await agent({ reminder_minutes_before: 60, reminder_call: true, metadata: { timezone: "UTC" } });
    expect(refusedFields(await patch(calling, { reminder_minutes_before: 5, reminder_call_inbound: true, metadata: { timezone: "Asia/Tokyo" } }))).toEqual([
      "reminder_call_inbound",
      "reminder_minutes_before",
      "metadata.timezone",
    ]);
    // What does not move the calls (its name, its greeting, the same zone), or stops them, needs no more.
    expect((await patch(calling, { name: "Ava B", first_message: "Hello!", metadata: { timezone: "UTC", business_name: "Acme" } })).status).toBe(200);
    expect((await patch(calling, { reminder_call: false })).status).toBe(200);
    expect((await patch(calling, { reminder_call: true }, await app.key(acct.id, ["agents:write", "calls:write"]))).status).toBe(200);
  });

  it("wait for the callee's calling hours when they open before the appointment, and are not placed when they do not", async () => {
    now = Date.parse("2030-03-12T00:00:00.000Z");
    // New York is on daylight time from March 10, 2030 (UTC-4); a US number is read in the agent's zone.
    const agentId = await agent({ reminder_minutes_before: 150, reminder_call: true, metadata: { timezone: "America/New_York" } });
    const later = await book(agentId, { date: "2030-03-12", time: "08:30" }); // due 06:00 EDT, 10:00Z
    const early = await book(agentId, { date: "2030-03-12", time: "08:00", customer_phone: "+14155550124" }); // due 05:30 EDT, 09:30Z
    await at(Date.parse("2030-03-12T10:00:00.000Z"));
    // 06:00 in New York is before 08:00: the reminder waits for 08:00 (12:00Z), the appointment being at 08:30.
    expect(await read(later.id)).toMatchObject({ reminder_at: "2030-03-12T12:00:00.000Z", reminder_status: "pending", reminder_call_id: null });
    expect(await reminders(later.id)).toEqual([]);
    // 08:00 is when the other appointment starts: no call, and the reminder says why.
    expect((await reminders(early.id))[0]).toMatchObject({ call_id: null, call_not_placed: "outside_calling_hours" });
    expect((await read(early.id)).reminder_status).toBe("sent");

    await at(Date.parse("2030-03-12T12:00:00.000Z"));
    const [sent] = await reminders(later.id);
    expect(sent!.call_id).toMatch(/^call_/);
    expect(await app.parley.services.calls.get(acct.id, sent!.call_id)).toMatchObject({ status: "queued", phone_number: "+14155550123" });
  });

  it("do not dial the caller ID an inbound caller booked with, unless the agent says so", async () => {
    now = Date.parse("2030-02-27T12:00:00.000Z");
    const plain = await agent({ reminder_minutes_before: 60, reminder_call: true, metadata: { timezone: "UTC" } });
    const trusting = await agent({ reminder_minutes_before: 60, reminder_call: true, reminder_call_inbound: true, metadata: { timezone: "UTC" } });
    expect((await app.request("GET", `/v1/agents/${plain}`, { key: acct.key })).body.reminder_call_inbound).toBe(false);
    const inbound = async (agentId: string) =>
      (await insertCallRow(app.parley.services.db, { account_id: acct.id, agent_id: agentId, direction: "inbound", phone_number: "+14155550100", from_number: "+14155550166" })).id;
    // Booked on an inbound call: the customer's phone is the caller ID, which anyone can send.
    const spoofable = await book(plain, { date: "2030-03-13", time: "15:00", call_id: await inbound(plain), customer_phone: "+14155550166" });
    const allowed = await book(trusting, { date: "2030-03-13", time: "15:00", call_id: await inbound(trusting), customer_phone: "+14155550166" });
    // A number given afterwards by a key that may place calls is no caller ID.
    const corrected = await book(plain, { date: "2030-03-13", time: "16:00", call_id: await inbound(plain), customer_phone: "+14155550166" });
    expect((await app.request("PATCH", `/v1/appointments/${corrected.id}`, { key: acct.key, body: { customer_phone: "+14155550167" } })).status).toBe(200);
    await at(Date.parse("2030-03-13T15:00:00.000Z"));
    expect((await reminders(spoofable.id))[0]).toMatchObject({ call_id: null, call_not_placed: "inbound_caller_id" });
    expect((await reminders(allowed.id))[0]!.call_id).toMatch(/^call_/);
    expect((await reminders(corrected.id))[0]!.call_id).toMatch(/^call_/);
  });

  it("are dialled under the account's concurrent-call limit, and not when the do-not-call list or the calling hours changed while they waited", async () => {
    now = Date.parse("2030-02-27T12:00:00.000Z");
    const owner = await app.account();
    await app.activeNumber(owner.key, { phone_number: "+14155550101", country: "US" });
    await app.parley.services.accounts.setLimits(owner.id, { concurrentCalls: 1 });
    const created = await app.request("POST", "/v1/agents", {
      key: owner.key,
      body: { name: "Ava", system_prompt: "You book.", voice_id: "flite-slt", reminder_minutes_before: 60, reminder_call: true, metadata: { timezone: "UTC" } },
    });
    const { services } = app.parley;
    const appointmentAt = (time: string, customer_phone: string) =>
      services.appointments.create({ account_id: owner.id, agent_id: created.body.id, date: "2030-03-14", time, customer_name: "Ada Lee", customer_phone, service: "cleaning" });
    const first = await appointmentAt("15:00", "+14155550131");
    const second = await appointmentAt("15:00", "+14155550132");
    const third = await appointmentAt("15:00", "+14155550133");
    const live = await insertCallRow(services.db, { account_id: owner.id, agent_id: created.body.id, status: "in_progress" });
    await at(Date.parse("2030-03-14T14:00:00.000Z"));
    const callOf = async (id: string) => (await reminders(id))[0]!.call_id as string;
    expect(await Promise.all([first.id, second.id, third.id].map(callOf))).toEqual([expect.stringMatching(/^call_/), expect.stringMatching(/^call_/), expect.stringMatching(/^call_/)]);

    // One call at a time: the live call holds the only place.
    expect(await services.callLifecycle.claimNext(owner.id)).toBeNull();
    await services.db.updateTable("calls").set({ status: "completed" }).where("id", "=", live.id).execute();
    const ringing = await services.callLifecycle.claimNext(owner.id);
    expect(ringing).toMatchObject({ id: await callOf(first.id), status: "ringing" });
    expect(await services.callLifecycle.claimNext(owner.id)).toBeNull();
    await services.callLifecycle.unanswered(ringing!.id, "no_answer");

    // While they waited, the second number was listed and then the evening came.
    await services.doNotCall.add(owner.id, "+14155550132");
    now = Date.parse("2030-03-14T21:00:00.000Z");
    expect(await services.callLifecycle.claimNext(owner.id)).toBeNull();
    expect(await services.calls.get(owner.id, await callOf(second.id))).toMatchObject({ status: "failed" });
    expect(await services.calls.get(owner.id, await callOf(third.id))).toMatchObject({ status: "failed" });
    const failures = await services.db.selectFrom("calls").select(["id", "failure_reason"]).where("account_id", "=", owner.id).where("status", "=", "failed").execute();
    expect(Object.fromEntries(failures.map((f) => [f.id, f.failure_reason]))).toEqual({ [await callOf(second.id)]: "do_not_call", [await callOf(third.id)]: "outside_calling_hours" });
  });
});

describe("appointment reminders across a restart", () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-reminders-"));
  let clock = Date.parse("2030-02-27T12:00:00.000Z");
  const start = (): Promise<Parley> =>
    startParley(loadConfig({ env: { PARLEY_ENGINE: "0", PARLEY_SIP_PORT: "0" }, cwd: dataDir, overrides: { port: 0, host: "127.0.0.1", dataDir, logLevel: "silent" } }), pino({ level: "silent" }), { clock: () => clock });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("sends at the next start a reminder that fell due while the service was down, and never one twice", async () => {
    let parley = await start();
    const account = await parley.services.accounts.create({ name: "R", plan: "pro", credits: 10 });
    const agentRecord = await parley.services.agents.create(account, { name: "A", system_prompt: "x", voice_id: "flite-slt", reminder_minutes_before: 60 } as never, ["*"]);
    const early = await parley.services.appointments.create({ account_id: account.id, agent_id: agentRecord.id, date: "2030-03-01", time: "10:00" });
    const late = await parley.services.appointments.create({ account_id: account.id, agent_id: agentRecord.id, date: "2030-03-02", time: "10:00" });
    await parley.stop();

    // Down past the first reminder's time.
    clock = Date.parse("2030-03-01T12:00:00.000Z");
    parley = await start();
    const names = async () => (await parley.services.db.selectFrom("events").select(["name", "data"]).where("name", "=", "appointment.reminder").execute()).map((e) => JSON.parse(e.data).appointment_id);
    for (let i = 0; i < 50 && (await names()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await names()).toEqual([early.id]);
    await parley.stop();

    parley = await start();
    clock = Date.parse("2030-03-02T09:00:00.000Z");
    parley.services.reminders.wake();
    for (let i = 0; i < 50 && (await names()).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await names()).toEqual([early.id, late.id]);
    await parley.stop();
  });
});
