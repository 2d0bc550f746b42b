import { describe, expect, it } from "vitest";
import { newAgentTurn } from "../../../../engine/session/agent-turn.js";
import { CallRecord, type RecordEvent } from "../../../../engine/session/call-record.js";

describe("CallRecord", () => {
  it("keeps the transcript in the order the segments started, words recognized late where they were said, each reported as it comes", () => {
    const reported: RecordEvent[] = [];
    const record = new CallRecord((e) => reported.push(e));
    record.said("agent", "Hello.", 0);
    record.said("agent", "How can I help?", 4.2);
    record.said("user", "hi", 1.23456);
    record.said("user", "same time", 4.2);
    expect(record.transcriptSoFar()).toEqual([
      { role: "agent", content: "Hello.", timestamp: 0 },
      { role: "user", content: "hi", timestamp: 1.23 },
      { role: "agent", content: "How can I help?", timestamp: 4.2 },
      { role: "user", content: "same time", timestamp: 4.2 },
    ]);
    expect(reported.map((e) => (e.type === "transcript" ? e.segment.content : ""))).toEqual(["Hello.", "How can I help?", "hi", "same time"]);
  });

  it("records an ended turn's metrics, then what of it was heard (nothing when nothing was), and hands out copies", () => {
    const reported: RecordEvent[] = [];
    const record = new CallRecord((e) => reported.push(e));
    const heard = newAgentTurn(1, null, "reply").metrics;
    const unheard = newAgentTurn(2, null, "reply").metrics;
    record.turnEnded(heard, "Sure.", 2);
    record.turnEnded(unheard, "", 3);
    record.actions.push({ type: "transfer" });
    expect(reported.map((e) => e.type)).toEqual(["turn_metrics", "transcript", "turn_metrics"]);
    const copy = record.copy();
    expect(copy).toEqual({ transcript: [{ role: "agent", content: "Sure.", timestamp: 2 }], turns: [heard, unheard], actions: [{ type: "transfer" }] });
    copy.transcript.pop();
    expect(record.transcriptSoFar()).toHaveLength(1);
    expect(record.transcriptClosed).toBe(false);
    record.close();
    expect(record.transcriptClosed).toBe(true);
  });
});
