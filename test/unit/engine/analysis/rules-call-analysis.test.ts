import { describe, expect, it } from "vitest";
import type { AnalysisInput } from "../../../../engine/analysis/call-analysis.js";
import { readCallFacts } from "../../../../engine/analysis/call-facts.js";
import { callerSentiment } from "../../../../engine/analysis/caller-sentiment.js";
import { analyzeByRules } from "../../../../engine/analysis/rules-call-analysis.js";
import type { CallAction, TranscriptSegment } from "../../../../engine/call-events.js";

const agent = (content: string): TranscriptSegment => ({ role: "agent", content, timestamp: 0 });
const user = (content: string): TranscriptSegment => ({ role: "user", content, timestamp: 0 });

const BOOKED: CallAction = {
  type: "tool_call",
  name: "book_appointment",
  arguments: { customer_name: "John Smith", date: "2026-12-01", time: "15:00", service: "cleaning" },
  result: { ok: true, data: { status: "booked", appointment_id: "apt_1", date: "2026-12-01", time: "15:00" } },
};
const REFUSED: CallAction = { ...BOOKED, result: { ok: false, error: "that time is already taken", data: { alternatives: [] } } } as CallAction;

function input(overrides: Partial<AnalysisInput>): AnalysisInput {
  return {
    transcript: [],
    actions: [],
    endReason: "agent_ended",
    transferred: false,
    durationSeconds: 72,
    direction: "outbound",
    farEndNumber: "+14155550123",
    agentName: "Ava",
    fields: [],
    startedAt: new Date("2026-11-25T10:00:00Z"),
    timeZone: "UTC",
    ...overrides,
  };
}

describe("the outcome from the agent's actions", () => {
  const cases: Array<[string, Partial<AnalysisInput>, string]> = [
    ["a stored booking", { actions: [BOOKED] }, "appointment_booked"],
    ["a refused booking is no booking", { actions: [REFUSED] }, "no_action"],
    ["an answered question", { actions: [{ type: "answered_question", question: "What are your opening hours?" }] }, "information_provided"],
    ["a callback agreed", { actions: [{ type: "callback_requested", date: "2026-11-26", time: null }, { type: "end_call", reason: "callback_requested" }] }, "callback_requested"],
    ["a transfer", { actions: [{ type: "transfer" }], transferred: true, endReason: "transferred" }, "transferred"],
    ["a voicemail", { actions: [{ type: "end_call", reason: "voicemail" }], endReason: "voicemail" }, "voicemail_left"],
    ["a do-not-call request", { actions: [{ type: "tool_call", name: "do_not_call", arguments: {}, result: { ok: true, data: {} } }], endReason: "do_not_call" }, "do_not_call"],
    ["a do-not-call request after a booking", { actions: [BOOKED, { type: "tool_call", name: "do_not_call", arguments: {}, result: { ok: true, data: {} } }] }, "do_not_call"],
    ["a decline", { actions: [{ type: "end_call", reason: "not_interested" }] }, "not_interested"],
    ["a booking after a question", { actions: [{ type: "answered_question", question: "Q?" }, BOOKED] }, "appointment_booked"],
    ["nothing", { actions: [], endReason: "caller_hangup" }, "no_action"],
    ["a reminder confirmed", { actions: [{ type: "tool_call", name: "confirm_appointment", arguments: {}, result: { ok: true, data: { appointment_id: "apt_1" } } }] }, "appointment_confirmed"],
    ["a reminder cancelled", { actions: [{ type: "tool_call", name: "cancel_appointment", arguments: {}, result: { ok: true, data: {} } }] }, "appointment_cancelled"],
    [
      "a reminder moved, after a refused move",
      {
        actions: [
          { type: "tool_call", name: "reschedule_appointment", arguments: { date: "2026-12-02", time: "16:00" }, result: { ok: false, error: "taken" } },
          { type: "tool_call", name: "reschedule_appointment", arguments: { date: "2026-12-02", time: "16:30" }, result: { ok: true, data: {} } },
        ],
      },
      "appointment_rescheduled",
    ],
    ["a refused move alone changes nothing", { actions: [{ type: "tool_call", name: "reschedule_appointment", arguments: {}, result: { ok: false, error: "taken" } }] }, "no_action"],
  ];
  it.each(cases)("%s", (_name, overrides, outcome) => {
    expect(readCallFacts(input(overrides)).outcome).toBe(outcome);
  });
});

describe("the caller's sentiment (VADER)", () => {
  it("is positive, negative or neutral from the caller's turns only", () => {
    expect(callerSentiment([agent("This is terrible news."), user("yes please that is great thank you")]).overall).toBe("positive");
    expect(callerSentiment([agent("Great!"), user("this is terrible i am very angry")]).overall).toBe("negative");
    const neutral = callerSentiment([user("my name is john smith")]);
    expect(neutral).toEqual({ overall: "neutral", score: 0.5 });
    expect(callerSentiment([agent("Hello!")])).toEqual({ overall: "neutral", score: 0.5 });
    const positive = callerSentiment([user("yes please")]);
    expect(positive.score).toBeGreaterThan(0.5);
    expect(positive.score).toBeLessThanOrEqual(1);
  });
});

describe("the deterministic analysis", () => {
  it("reports a booking with its details, the caller's phone and a summary", () => {
    const analysis = analyzeByRules(
      input({
        transcript: [agent("How can I help?"), user("i would like to book a cleaning"), agent("Shall I book it?"), user("yes please thank you")],
        actions: [BOOKED, { type: "end_call", reason: "caller_goodbye" }],
      }),
    );
    expect(analysis).toMatchObject({
      source: "rules",
      outcome: "appointment_booked",
      success: true,
      sentiment: { overall: "positive" },
      extracted_data: {
        appointment_id: "apt_1",
        appointment_date: "2026-12-01",
        appointment_time: "15:00",
        service: "cleaning",
        customer_name: "John Smith",
        customer_email: null,
        customer_phone: "+14155550123",
      },
    });
    expect(analysis.summary).toBe(
      "Outbound call to +14155550123 with Ava, 1 min 12 s. The callee booked a cleaning appointment on 2026-12-01 at 15:00 for John Smith. The callee's tone was positive.",
    );
  });

  it("reads the agent's own fields from the caller's answers, and leaves what was not said null", () => {
    const fields = [
      { name: "party_size", type: "number", description: "How many people are coming" },
      { name: "new_patient", type: "boolean", description: "Whether the caller has not visited before" },
      { name: "contact_phone", type: "phone", description: "A number to reach the caller" },
      { name: "insurance", type: "enum", description: "The caller's insurer", enum: ["aetna", "cigna", "blue cross"] },
      { name: "preferred_date", type: "date", description: "The day the caller prefers" },
      { name: "email", type: "email", description: "The caller's email address" },
      { name: "notes", type: "string", description: "Anything else" },
    ] as const;
    const analysis = analyzeByRules(
      input({
        direction: "inbound",
        farEndNumber: "+442079460000",
        fields,
        transcript: [
          agent("Is this your first visit with us, as a new patient?"),
          user("yes it is"),
          agent("How many people will come? What is your party size?"),
          user("there will be three of us"),
          agent("Thanks."),
          user("we are with cigna by the way"),
          user("my phone number is zero two zero seven nine four six zero nine five eight"),
          agent("What day would you prefer, your preferred date?"),
          user("i do not know yet"),
        ],
      }),
    );
    expect(analysis.extracted_data).toEqual({
      party_size: 3,
      new_patient: true,
      contact_phone: "+442079460958",
      insurance: "cigna",
      preferred_date: null,
      email: null,
      notes: null,
    });
    expect(analysis.outcome).toBe("no_action");
    expect(analysis.success).toBe(false);
  });

  it("gives a callback's day and time in extracted_data and the summary", () => {
    const analysis = analyzeByRules(
      input({
        transcript: [user("i am busy right now please call me back tomorrow")],
        actions: [{ type: "callback_requested", date: "2026-11-26", time: null }, { type: "end_call", reason: "callback_requested" }],
      }),
    );
    expect(analysis.extracted_data).toEqual({ callback_date: "2026-11-26", callback_time: null });
    expect(analysis.summary).toContain("The callee asked to be called back on 2026-11-26.");
  });

  it("says how a call that achieved nothing ended", () => {
    const analysis = analyzeByRules(input({ direction: "web", farEndNumber: null, endReason: "silence_timeout", durationSeconds: 31 }));
    expect(analysis.summary).toBe("Web call with Ava, 31 s. Nothing was booked, answered or handed over. The call ended after a long silence. The caller said nothing the agent could make out.");
  });
});
