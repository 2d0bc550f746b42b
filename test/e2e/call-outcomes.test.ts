import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAUSE_MS } from "../../engine/turn/adaptive-turn-detector.js";
import { EventsRepository } from "../../src/db/repositories/events.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// One conversation per outcome, over fixture audio: the simulator carrier's callee speaks
// fixture lines to the real engine (VAD, recognizer, rules dialogue, TTS) over a simulated
// 8 kHz line, and each call's stored analysis and end event are checked. The calls run side
// by side (each test has its own account), so the file takes as long as its longest call.

const GREETING = "Hello, this is Ava from Acme Dental.";
const ENDED = ["completed", "transferred", "failed", "no_answer", "busy"];
const FAQ = [{ question: "What are your opening hours?", answer: "We are open from eight to six, Monday to Saturday." }];

let app: TestApp;

beforeAll(async () => {
  // Eight calls at once, each with its own recognizer.
  app = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_CALL_CAPACITY: "10" });
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** The date a day name or "tomorrow" means for a call made now (the agent's zone is UTC). */
function dayFromNow(weekday: number | "tomorrow"): string {
  const d = new Date();
  const ahead = weekday === "tomorrow" ? 1 : (weekday - d.getUTCDay() + 7) % 7 || 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + ahead)).toISOString().slice(0, 10);
}

/** Places a simulator call whose callee says `script`; resolves with the ended call (analysis and latency included) and its events. */
async function converse(script: string[], agent: Record<string, unknown> = {}, phone = "+14155550140") {
  const account = await app.account({ credits: 100 });
  await app.parley.services.phoneNumbers.add(account.id, { phone_number: `+1650555${String(1000 + Math.floor(Math.random() * 8999))}`, country: "US" } as never);
  const created = await app.request("POST", "/v1/agents", {
    key: account.key,
    body: { name: "Ava", system_prompt: "You call patients of Acme Dental.", voice_id: "flite-kal", first_message: GREETING, ...agent, metadata: { business_name: "Acme Dental", ...(agent.metadata as object) } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const res = await app.request("POST", "/v1/calls", { key: account.key, body: { phone_number: phone, agent_id: created.body.id, metadata: { simulator_script: script } } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const deadline = Date.now() + 110_000;
  for (;;) {
    const call = (await app.request("GET", `/v1/calls/${res.body.id}?include=transcript,analysis,latency`, { key: account.key })).body;
    if (ENDED.includes(call.status) && call.analysis) {
      const events = await new EventsRepository(app.parley.services.db).forCall(call.id);
      const end = events.find((e) => ["call.completed", "call.transferred", "call.failed"].includes(e.name))!;
      return { call, events, end: end.data as Record<string, any>, heard: call.transcript.filter((s: any) => s.role === "user").map((s: any) => s.content).join(" | ") };
    }
    if (Date.now() > deadline) throw new Error(`call ${res.body.id} stuck in ${call.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The end event carries the analysis as stored. */
function expectEndEventCarries(end: Record<string, any>, analysis: Record<string, any>) {
  expect(end.outcome).toBe(analysis.outcome);
  expect(end.extracted_data).toEqual(analysis.extracted_data);
  expect(end.sentiment).toEqual(analysis.sentiment);
  expect(end.summary).toBe(analysis.summary);
  expect(end.success).toBe(analysis.success);
}

describe.concurrent("each outcome, from a real conversation", () => {
  it("appointment_booked: the booking's details and the callee's number, and a latency entry per agent turn", async () => {
    const { call, end, heard } = await converse(["book-appointment", "service-cleaning", "day-and-time", "my-name", "yes-please", "goodbye"], {
      metadata: { services: ["cleaning", "checkup"] },
    });
    expect(call.analysis, heard).toMatchObject({
      source: "rules",
      outcome: "appointment_booked",
      success: true,
      extracted_data: {
        appointment_date: dayFromNow(2),
        appointment_time: "15:00",
        service: "cleaning",
        customer_name: "John Smith",
        customer_phone: "+14155550140",
        customer_email: null,
      },
    });
    expect(call.analysis.extracted_data.appointment_id).toMatch(/^apt_/);
    expect(call.analysis.summary).toContain(`booked a cleaning appointment on ${dayFromNow(2)} at 15:00 for John Smith`);
    expectEndEventCarries(end, call.analysis);

    // One latency entry per agent turn, each stage after the one it needs. The agent is
    // adaptive (the default): a caller line judged at its pause has its final (and often its
    // reply) before the end of the turn, but only when the recognizer keeps up: eight calls at
    // once beside the other test lane can put it seconds behind, and the turn then ends at its
    // full wait with the final after it. So the final's place against the end is not checked
    // here but in call-session.test.ts, on a fake clock.
    const agentTurns = call.transcript.filter((s: any) => s.role === "agent").length;
    const { turns } = call.latency;
    expect(turns).toHaveLength(agentTurns);
    expect(turns[0]).toMatchObject({ turn_id: 1, end_of_speech_at: null, endpoint_ms: null, interrupted: false });
    const replies = turns.filter((t: any) => t.end_of_speech_at !== null);
    expect(replies.length).toBe(6);
    for (const t of replies) {
      expect(t.endpoint_ms).toBeGreaterThanOrEqual(PAUSE_MS);
      expect(t.endpoint_ms).toBeLessThan(2_000);
      expect(t.first_token_ms).toBeGreaterThanOrEqual(t.asr_final_ms);
      expect(t.first_audio_ms).toBeGreaterThanOrEqual(t.first_token_ms);
      expect(t.voice_to_voice_ms).toBeGreaterThanOrEqual(Math.max(t.first_audio_ms, t.endpoint_ms));
      expect(t.voice_to_voice_ms).toBeLessThan(10_000);
    }
    const sorted = replies.map((t: any) => t.voice_to_voice_ms).sort((a: number, b: number) => a - b);
    expect(call.latency.voice_to_voice_p50_ms).toBe(sorted[2]);
    expect(call.latency.voice_to_voice_p95_ms).toBe(sorted[5]);
  }, 120_000);

  it("information_provided: an answered question, and the agent's own fields read from what was said, null when not said", async () => {
    const { call, end, heard } = await converse(["opening-hours", "phone-number", "goodbye"], {
      metadata: { faq: FAQ },
      analysis_fields: [
        { name: "contact_phone", type: "phone", description: "A number to call the patient back on" },
        { name: "email", type: "email", description: "The patient's email address" },
      ],
    });
    expect(call.analysis, heard).toMatchObject({
      outcome: "information_provided",
      success: true,
      extracted_data: { contact_phone: "+14155550199", email: null },
    });
    expect(call.analysis.summary).toContain('answered the question "What are your opening hours?"');
    expectEndEventCarries(end, call.analysis);
  }, 120_000);

  it("callback_requested: the day the callee asked to be called back", async () => {
    const { call, end, heard } = await converse(["call-me-back"]);
    expect(call.analysis, heard).toMatchObject({ outcome: "callback_requested", success: true, extracted_data: { callback_date: dayFromNow("tomorrow"), callback_time: null } });
    expect(call.transcript.at(-1).content).toMatch(/we'll call you back on/);
    expectEndEventCarries(end, call.analysis);
  }, 120_000);

  it("transferred: the hand-off, in call.transferred", async () => {
    const { call, end, events, heard } = await converse(["speak-to-human"], { transfer_enabled: true, transfer_number: "+14155550100" });
    expect(call.status).toBe("transferred");
    expect(call.analysis, heard).toMatchObject({ outcome: "transferred", success: true });
    expect(events.map((e) => e.name)).toContain("call.transferred");
    expect(end.transfer_number).toBe("+14155550100");
    expectEndEventCarries(end, call.analysis);
  }, 120_000);

  it("voicemail_left: a message left on an answering machine", async () => {
    const { call, end, heard } = await converse(["voicemail-greeting"]);
    expect(call.analysis, heard).toMatchObject({ outcome: "voicemail_left", success: true });
    expect(call.analysis.summary).toContain("An answering machine picked up and the agent left a message.");
    expectEndEventCarries(end, call.analysis);
  }, 120_000);

  it("do_not_call: the callee's number listed", async () => {
    const { call, end, heard } = await converse(["stop-calling"], {}, "+14155550141");
    expect(call.analysis, heard).toMatchObject({ outcome: "do_not_call", success: false });
    expect(call.analysis.summary).toContain("put on the do-not-call list");
    expectEndEventCarries(end, call.analysis);
  }, 120_000);

  it("not_interested: a callee who declines", async () => {
    const { call, end, heard } = await converse(["not-interested"]);
    expect(call.analysis, heard).toMatchObject({ outcome: "not_interested", success: false });
    expect(call.analysis.sentiment.overall).toBe("negative");
    expectEndEventCarries(end, call.analysis);
  }, 120_000);

  it("no_action: a callee who only says goodbye", async () => {
    const { call, end, heard } = await converse(["goodbye"]);
    expect(call.analysis, heard).toMatchObject({ outcome: "no_action", success: false, extracted_data: {} });
    expect(call.analysis.summary).toContain("Nothing was booked, answered or handed over. The call ended with a goodbye.");
    expectEndEventCarries(end, call.analysis);
  }, 120_000);
});
