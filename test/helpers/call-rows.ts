import { randomBase62 } from "../../src/core/ids.js";
import type { Db } from "../../src/db/database.js";
import type { CallTable } from "../../src/db/schema.js";

/**
 * Writes a call row directly, for states the API cannot produce yet (ringing, ended,
 * inbound, with transcripts): what the telephony layer will write.
 */
export async function insertCallRow(
  db: Db,
  row: Pick<CallTable, "account_id" | "agent_id"> & Partial<CallTable>,
): Promise<CallTable> {
  const at = row.created_at ?? new Date().toISOString();
  const full: CallTable = {
    id: "call_" + randomBase62(20),
    campaign_id: null,
    contact_id: null,
    direction: "outbound",
    status: "completed",
    phone_number: "+14155550123",
    from_number: "+14155550100",
    metadata: "{}",
    context: "{}",
    record: 1,
    max_duration: 3600,
    webhook_url: null,
    duration: null,
    transcript: null,
    recording_path: null,
    analysis: null,
    node_id: null,
    outcome: null,
    actions: null,
    end_reason: null,
    transfer_number: null,
    failure_reason: null,
    latency: null,
    analysis_pending: 0,
    appointment_id: null,
    billed_credits: null,
    answered_at: null,
    ended_at: null,
    updated_at: at,
    ...row,
    created_at: at,
  };
  await db.insertInto("calls").values(full).execute();
  return full;
}

/** What receivers answered to the deliveries of these calls' events (status and stored body of each attempt). */
export function deliveryAnswersOf(db: Db, callIds: readonly string[]): Promise<Array<{ response_body: string | null; status_code: number | null }>> {
  return db
    .selectFrom("delivery_attempts")
    .innerJoin("deliveries", "deliveries.id", "delivery_attempts.delivery_id")
    .innerJoin("events", "events.id", "deliveries.event_id")
    .select(["delivery_attempts.response_body", "delivery_attempts.status_code"])
    .where("events.call_id", "in", callIds)
    .execute();
}
