import { describe, expect, it } from "vitest";
import { unfinishedCallFields, type CallRecord, type CallStatus } from "../../../src/db/repositories/calls.js";
import { callEventNames } from "../../../src/services/call-events.js";

function call(status: CallStatus, ended: Partial<CallRecord> = {}): CallRecord {
  return {
    id: "call_1",
    account_id: "acct_1",
    agent_id: "agent_1",
    campaign_id: null,
    contact_id: null,
    direction: "outbound",
    status,
    phone_number: "+14155550123",
    from_number: "+14155550100",
    metadata: {},
    context: {},
    record: true,
    max_duration: 3600,
    webhook_url: null,
    ...unfinishedCallFields(),
    created_at: "t",
    answered_at: null,
    updated_at: "t",
    ...ended,
  };
}

describe("callEventNames", () => {
  it("names nothing for a queued call; dialing starts and rings it", () => {
    expect(callEventNames(null, call("queued"))).toEqual([]);
    expect(callEventNames("queued", call("ringing"))).toEqual(["call.started", "call.ringing"]);
  });

  it("starts calls that arrive connected (inbound, web) and answers dialled ones", () => {
    expect(callEventNames(null, call("in_progress"))).toEqual(["call.started", "call.answered"]);
    expect(callEventNames("ringing", call("in_progress"))).toEqual(["call.answered"]);
  });

  it("sends call.failed for failed, busy and no_answer alike", () => {
    for (const status of ["failed", "busy", "no_answer"] as const) expect(callEventNames("ringing", call(status))).toEqual(["call.failed"]);
  });

  it("ends connected calls with their own event, then the transcript and recording when there are any", () => {
    const transcript = [{ role: "agent" as const, content: "Hello", timestamp: 0 }];
    expect(callEventNames("in_progress", call("completed"))).toEqual(["call.completed"]);
    expect(callEventNames("in_progress", call("completed", { transcript: [] }))).toEqual(["call.completed"]);
    expect(callEventNames("in_progress", call("transferred", { transcript, recording_path: "/r.wav" }))).toEqual([
      "call.transferred",
      "call.transcript.ready",
      "call.recording.ready",
    ]);
  });
});
