import type { Db } from "../database.js";

/**
 * The rows outside `calls` and `events` that hold a copy of what a call carried, cleared when
 * its content is removed (CallContentRemoval):
 * - its campaign contact's `context` (each attempt's call copies it);
 * - its web call token's `context` (the call copies it when the token is redeemed);
 * - the receivers' answers to the deliveries of its events (`delivery_attempts.response_body`:
 *   a receiver may echo the body it got, which carries the transcript and summary).
 * Stored idempotent responses need nothing: no response of a POST carries a call's context,
 * transcript or analysis (POST /v1/calls answers without `context`).
 */
export class CallContentCopiesRepository {
  constructor(private readonly db: Db) {}

  /** Empties the context of the campaign contact `contactId` (the call's own contact); true when it held one. */
  async clearContactContext(contactId: string, db: Db = this.db): Promise<boolean> {
    const result = await db.updateTable("campaign_contacts").set({ context: "{}" }).where("id", "=", contactId).where("context", "<>", "{}").executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Empties the context of the web call token that gave `callId` its id, if any; true when it held one. */
  async clearWebCallTokenContext(callId: string, db: Db = this.db): Promise<boolean> {
    const result = await db.updateTable("web_call_tokens").set({ context: "{}" }).where("call_id", "=", callId).where("context", "<>", "{}").executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Forgets what receivers answered to the deliveries of the call's events (the attempts stay: time, status, error); true when there was any. */
  async clearDeliveryResponses(callId: string, db: Db = this.db): Promise<boolean> {
    const result = await db
      .updateTable("delivery_attempts")
      .set({ response_body: null })
      .where("response_body", "is not", null)
      .where("delivery_id", "in", (eb) =>
        eb
          .selectFrom("deliveries")
          .select("deliveries.id")
          .where("deliveries.event_id", "in", (e) => e.selectFrom("events").select("events.id").where("events.call_id", "=", callId)),
      )
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
