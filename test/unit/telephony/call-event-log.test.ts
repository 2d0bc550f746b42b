import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CallEvent } from "../../../engine/index.js";
import { createLogger } from "../../../src/core/logger.js";
import { logCallEvent } from "../../../src/telephony/call-event-log.js";

const SAID = "my card number is four four one two and I live at 12 Elm Street";

/** Every kind of session event, each carrying words said on the call where it can. */
const EVENTS: CallEvent[] = [
  { type: "state", state: "listening" },
  { type: "partial_transcript", text: SAID },
  { type: "transcript", segment: { role: "user", content: SAID, timestamp: 3.5 } },
  { type: "interruption", turnId: 2, playedMs: 840, heardText: SAID },
  {
    type: "turn_metrics",
    metrics: { turnId: 2, endOfSpeechAt: 1000, endpointAt: 1700, asrFinalAt: 1690, firstTokenAt: 1710, firstTtsAudioAt: 1800, firstFrameSentAt: 1805, voiceToVoiceMs: 805.4, interrupted: false },
  },
  { type: "early_reply", used: true },
  { type: "tool_call", name: "book_appointment", arguments: { name: "Elm Street", note: SAID }, result: { ok: true, data: { confirmation: SAID } } },
  { type: "transfer", number: "+14155550123" },
  { type: "dtmf", digit: "7" },
  { type: "recording", path: "/data/recordings/call_abc.wav", durationMs: 18_499.6 },
  { type: "error", message: "tts failed for +14155550123", recovered: true },
  { type: "ended", reason: "caller_hangup", durationMs: 18_500, transcript: [{ role: "user", content: SAID, timestamp: 3.5 }] },
];

describe("logCallEvent", () => {
  it("writes one line per session event with the call's ids and what happened, never what was said", async () => {
    let output = "";
    const destination = new Writable({
      write(chunk, _encoding, done) {
        output += String(chunk);
        done();
      },
    });
    const log = createLogger("trace", { destination }).child({ call_id: "call_abc", account_id: "acct_xyz" });
    for (const event of EVENTS) logCallEvent(log, event);
    await new Promise((resolve) => setImmediate(resolve));

    const lines = output.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.event, l.level])).toEqual([
      ["call.state", 20],
      ["call.partial_transcript", 10],
      ["call.transcript_segment", 20],
      ["call.barge_in", 30],
      ["call.turn", 30],
      ["call.early_reply", 20],
      ["call.tool", 30],
      ["call.transfer", 30],
      ["call.dtmf", 20],
      ["call.recording", 30],
      ["call.error", 40],
      ["call.ended", 30],
    ]);
    for (const line of lines) expect(line).toMatchObject({ call_id: "call_abc", account_id: "acct_xyz", msg: "call event" });
    expect(lines[2]).toMatchObject({ role: "user", at_s: 3.5, chars: SAID.length });
    expect(lines[3]).toMatchObject({ turn_id: 2, played_ms: 840 });
    // Stages: endpointing 700 ms; the recognizer finished before the endpoint (0, not negative); first token 20 ms after it; audio 90 ms later.
    expect(lines[4]).toMatchObject({ turn_id: 2, endpointing_ms: 700, asr_ms: 0, first_token_ms: 20, first_audio_ms: 90, voice_to_voice_ms: 805, interrupted: false });
    expect(lines[6]).toMatchObject({ tool: "book_appointment", ok: true });
    expect(lines[7]).toMatchObject({ transfer_number: "+1415****123" });
    expect(lines[10]).toMatchObject({ error: "tts failed for +1415****123", recovered: true });
    expect(lines[11]).toMatchObject({ reason: "caller_hangup", duration_ms: 18_500, segments: 1 });
    for (const words of ["card number", "Elm Street", "four four", "5550123", '"7"', "call_abc.wav"]) expect(output).not.toContain(words);
  });
});
