import { describe, expect, it } from "vitest";
import type { CallAction, CallAnalysis } from "../../../engine/index.js";
import { checkExpectations, type ScenarioEvidence } from "../../../src/services/test-run-expectations.js";

const analysis = (over: Partial<CallAnalysis> = {}): CallAnalysis => ({
  source: "rules",
  summary: "",
  outcome: "appointment_booked",
  success: true,
  sentiment: { overall: "neutral", score: 0.5 },
  extracted_data: { customer_name: "John Smith", nights: 2, vip: false },
  ...over,
});
const booking = (ok: boolean, date = "2026-12-01"): CallAction => ({
  type: "tool_call",
  name: "book_appointment",
  arguments: { service: "Teeth whitening", customer_name: "John Smith", date, time: "15:00" },
  result: ok ? { ok: true, data: { status: "booked", appointment_id: "apt_1", date, time: "15:00" } } : { ok: false, error: "that time is already taken" },
});
const evidence = (over: Partial<ScenarioEvidence> = {}): ScenarioEvidence => ({
  transcript: [
    { role: "agent", content: "Hello! I've booked you in.", timestamp: 0 },
    { role: "user", content: "pizza please", timestamp: 1 },
  ],
  analysis: analysis(),
  actions: [booking(true)],
  turns: [
    { line: 0, voice_to_voice_ms: 900 },
    { line: 1, voice_to_voice_ms: 1400 },
    { line: 2, voice_to_voice_ms: null },
  ],
  ...over,
});
const verdicts = (results: ReturnType<typeof checkExpectations>) => Object.fromEntries(results.map((r) => [r.name, r.passed]));

describe("checkExpectations", () => {
  it("checks nothing when nothing is expected", () => {
    expect(checkExpectations({}, evidence())).toEqual([]);
  });

  it("compares the outcome, naming what was seen", () => {
    expect(checkExpectations({ outcome: "transferred" }, evidence())).toEqual([{ name: "outcome", passed: false, expected: "transferred", seen: "appointment_booked" }]);
  });

  it("compares extracted data: strings as words, other values exactly, a missing field as null", () => {
    const results = checkExpectations({ extracted_data: { customer_name: "john  smith!", nights: 2, vip: true, email: null, phone: "+1" } }, evidence());
    expect(verdicts(results)).toEqual({ "extracted_data.customer_name": true, "extracted_data.nights": true, "extracted_data.vip": false, "extracted_data.email": true, "extracted_data.phone": false });
    expect(results.find((r) => r.name === "extracted_data.phone")!.seen).toBeNull();
  });

  it("finds phrases among the agent's words only, as whole words", () => {
    const results = checkExpectations({ must_say: ["I've BOOKED", "booked you in", "ooked", "pizza"], must_not_say: ["pizza", "hello"] }, evidence());
    expect(verdicts(results)).toEqual({ "must_say: I've BOOKED": true, "must_say: booked you in": true, "must_say: ooked": false, "must_say: pizza": false, "must_not_say: pizza": true, "must_not_say: hello": false });
    expect(results.find((r) => r.name === "must_not_say: hello")!.seen).toBe("hello");
  });

  it("bounds the slowest answered turn; no answered turn fails", () => {
    expect(checkExpectations({ max_voice_to_voice_ms: 1500 }, evidence())).toEqual([{ name: "max_voice_to_voice_ms", passed: true, expected: 1500, seen: 1400 }]);
    expect(checkExpectations({ max_voice_to_voice_ms: 1000 }, evidence())[0]!.passed).toBe(false);
    expect(checkExpectations({ max_voice_to_voice_ms: 1000 }, evidence({ turns: [{ line: 0, voice_to_voice_ms: null }] }))[0]).toMatchObject({ passed: false, seen: null });
  });

  it("compares the last appointment booked, with its weekday; a refused booking is none", () => {
    const expected = { service: "teeth whitening", weekday: "tuesday", date: "2026-12-01", time: "15:00", customer_name: "John Smith" };
    expect(verdicts(checkExpectations({ appointment: expected }, evidence()))).toEqual({
      "appointment.service": true,
      "appointment.weekday": true,
      "appointment.date": true,
      "appointment.time": true,
      "appointment.customer_name": true,
    });
    const wrongDay = checkExpectations({ appointment: { weekday: "monday" } }, evidence());
    expect(wrongDay).toEqual([{ name: "appointment.weekday", passed: false, expected: "monday", seen: "tuesday" }]);
    const refused = checkExpectations({ appointment: { time: "15:00" } }, evidence({ actions: [booking(false)] }));
    expect(refused).toEqual([{ name: "appointment.time", passed: false, expected: "15:00", seen: null }]);
    const rebooked = checkExpectations({ appointment: { date: "2026-12-02" } }, evidence({ actions: [booking(true), booking(true, "2026-12-02")] }));
    expect(rebooked[0]!.passed).toBe(true);
  });
});
