import { describe, expect, it } from "vitest";
import { RemoteCall } from "../../../../engine/workers/remote-call.js";
import type { ToWorker } from "../../../../engine/workers/session-protocol.js";
import { RecordingTransport } from "../../../helpers/call-session-harness.js";
import { testAgent } from "../../../helpers/dialogue.js";

// say and whisper on a call that runs on a session worker: checked on the main thread, carried
// to the worker as one `supervise` message (session-worker.ts hands it to CallSession.say/whisper).

function remoteCall() {
  const posted: ToWorker[] = [];
  const call = new RemoteCall({ post: (message) => void posted.push(message) }, { callId: "call_1", agent: testAgent(), context: {}, transport: new RecordingTransport(), recordingPath: null, maxDurationSec: 60 });
  return { call, posted, supervised: () => posted.filter((m) => m.type === "supervise") };
}

describe("RemoteCall: say and whisper", () => {
  it("carries each to the call's worker, trimmed, in order", () => {
    const { call, supervised } = remoteCall();
    void call.start();
    call.say(" Hello, this is the manager. ");
    call.whisper("Offer the discount.");
    expect(supervised()).toEqual([
      { type: "supervise", callId: "call_1", action: "say", text: "Hello, this is the manager." },
      { type: "supervise", callId: "call_1", action: "whisper", text: "Offer the discount." },
    ]);
  });

  it("refuses an empty or over-long text with a RangeError here, sending nothing", () => {
    const { call, supervised } = remoteCall();
    for (const text of ["", "  ", "y".repeat(1001)]) {
      expect(() => call.say(text)).toThrow(RangeError);
      expect(() => call.whisper(text)).toThrow(RangeError);
    }
    expect(supervised()).toEqual([]);
  });

  it("sends nothing once the call has ended", async () => {
    const { call, supervised } = remoteCall();
    call.receive({ type: "ended", callId: "call_1", summary: { reason: "stopped", durationMs: 0, transcript: [], recording: null, turns: [], startedAt: 0, actions: [] } });
    await call.ended;
    call.say("Are you still there?");
    call.whisper("Be brief.");
    expect(supervised()).toEqual([]);
  });
});
