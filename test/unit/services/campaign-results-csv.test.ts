import { describe, expect, it } from "vitest";
import type { ContactRecord } from "../../../src/db/repositories/campaign-contacts.js";
import type { CallAnalysis, CallOutcome, FieldValue } from "../../../engine/index.js";
import { unfinishedCallFields, type CallRecord } from "../../../src/db/repositories/calls.js";
import { campaignResultsCsv } from "../../../src/services/campaign-results-csv.js";

const contact = (id: string, phone: string, callId: string | null, status: ContactRecord["status"] = "completed"): ContactRecord => ({
  id, campaign_id: "cmp_1", position: 0, phone, context: {}, status, call_id: callId, attempts: callId ? 1 : 0,
  timezone: null, zone: null, next_attempt_at: null, failures: 0, reason: null, updated_at: "t",
});
const call = (id: string, result: { outcome: CallOutcome; extracted_data: Record<string, FieldValue> }): CallRecord => {
  const analysis: CallAnalysis = { source: "rules", summary: "s", success: false, sentiment: { overall: "neutral", score: 0.5 }, ...result };
  return {
    id, account_id: "acct_1", agent_id: "agent_1", campaign_id: "cmp_1", contact_id: "cc_1", direction: "outbound", status: "completed",
    phone_number: "+14155550100", from_number: null, metadata: {}, context: {}, record: true, max_duration: 3600, webhook_url: null,
    ...unfinishedCallFields(), duration: 42, analysis, outcome: result.outcome, created_at: "t", answered_at: "t", updated_at: "t",
  };
};

describe("results.csv", () => {
  it("has the fixed columns, then one per extracted field, quoting and defusing formulas", () => {
    const calls = new Map([
      ["call_a", call("call_a", { outcome: "appointment_booked", extracted_data: { name: 'Ann "A", Jr', note: "=HYPERLINK(\"http://x\")" } })],
      ["call_b", call("call_b", { outcome: "no_action", extracted_data: { email: "b@example.com" } })],
    ]);
    const csv = campaignResultsCsv([contact("cc_a", "+14155550101", "call_a"), contact("cc_b", "+14155550102", "call_b"), contact("cc_c", "+14155550103", null, "skipped")], calls);
    const lines = csv.split("\r\n");
    expect(lines[0]).toBe("contact_id,phone,status,reason,attempts,last_call_id,last_call_status,duration_seconds,outcome,extracted_data.email,extracted_data.name,extracted_data.note");
    expect(lines[1]).toBe('cc_a,+14155550101,completed,,1,call_a,completed,42,appointment_booked,,"Ann ""A"", Jr","\'=HYPERLINK(""http://x"")"');
    expect(lines[2]).toBe("cc_b,+14155550102,completed,,1,call_b,completed,42,no_action,b@example.com,,");
    expect(lines[3]).toBe("cc_c,+14155550103,skipped,,0,,,,,,,");
    expect(lines[4]).toBe("");
  });
});
