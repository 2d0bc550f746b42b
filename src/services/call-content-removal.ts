import type { Logger } from "pino";
import { ApiError } from "../core/api-error.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import { CallContentCopiesRepository } from "../db/repositories/call-content-copies.js";
import { CallsRepository, ENDED_CALL_STATUSES, type CallRecord, type CallStatus } from "../db/repositories/calls.js";
import { EventsRepository } from "../db/repositories/events.js";
import { WalTruncation } from "../db/wal-truncation.js";
import type { CallEvents } from "./call-events.js";
import { findOwned } from "./ownership.js";
import type { RecordingStore } from "./recording-store.js";

const NOT_FOUND = { code: "call_not_found", message: "No call with this id" };

/**
 * Removes what was said on an ended call, for privacy requests (DELETE /v1/calls/{id}): the
 * recording (its file, or its object in the bucket), the transcript, the analysis (and its
 * outcome), the agent's actions (read from the conversation) and the personalisation context;
 * and the same content from the call's stored events, so GET /v1/events and later deliveries
 * no longer carry it; and the copies elsewhere (its campaign contact's and web call token's
 * context, what receivers answered to its deliveries: CallContentCopiesRepository). The
 * billing record stays: the call's status, numbers, metadata, times, duration, charge and
 * latency, and the ledger.
 * Appointments booked on the call are their own records (cancel them apart).
 *
 * Nothing of it is left in the data files: every connection has `secure_delete` on (freed
 * space is zeroed), and the WAL, which still holds the page versions written before, is
 * emptied after each removal (WalTruncation: when another process reads it meanwhile, a later
 * try empties it).
 */
export class CallContentRemoval {
  private readonly calls: CallsRepository;
  private readonly events: EventsRepository;
  private readonly copies: CallContentCopiesRepository;
  private readonly wal: WalTruncation;

  constructor(
    private readonly db: Db,
    private readonly deps: { events: CallEvents; recordings: RecordingStore; logger: Logger },
  ) {
    this.calls = new CallsRepository(db);
    this.events = new EventsRepository(db);
    this.copies = new CallContentCopiesRepository(db);
    this.wal = new WalTruncation(db, (tries) => {
      if (tries === 1) deps.logger.warn("removed call content stays in the database's WAL file while another process reads it; emptying it is retried");
    });
  }

  /**
   * Removes the call's content; then, unless `emptyWal` is false (the retention job empties it
   * once per batch), empties the WAL (see truncateWal: it never waits for another process).
   * A call with nothing left to remove (deleted already) does not empty it again: each
   * emptying holds the event loop for a few milliseconds, which repeated requests for the same
   * call must not be able to multiply.
   */
  async remove(accountId: string, id: string, options: { emptyWal?: boolean } = {}): Promise<CallRecord> {
    const call = findOwned(await this.calls.findById(id), accountId, NOT_FOUND);
    if (!(ENDED_CALL_STATUSES as readonly CallStatus[]).includes(call.status)) {
      throw new ApiError(409, "call_not_ended", `Call ${id} is ${call.status}: end it first (POST /v1/calls/${id}/end), then delete its content`);
    }
    // The model writing the analysis would put content back once it answers.
    if (call.analysis_pending) throw new ApiError(409, "call_analysis_pending", `Call ${id}'s analysis is still being written (up to a minute after the call): try again shortly`);
    // The recording goes first (from the data directory or the bucket): a failure after it
    // leaves less behind, never more; a failure of it (the bucket unreachable) removes nothing.
    if (call.recording_path) await this.deps.recordings.remove(call.recording_path);
    const removed = { transcript: null, recording_path: null, analysis: null, outcome: null, actions: null, context: {}, updated_at: nowIso() };
    let changed = call.transcript !== null || call.recording_path !== null || call.analysis !== null || call.outcome !== null || call.actions !== null || Object.keys(call.context).length > 0;
    await this.db.transaction().execute(async (trx) => {
      await this.calls.update(id, removed, trx);
      for (const event of await this.events.forCall(id, trx)) {
        const data = this.deps.events.withoutContent(event.name, event.data, call, { ...call, ...removed });
        if (JSON.stringify(data) === JSON.stringify(event.data)) continue;
        await this.events.replaceData(event.id, data, trx);
        changed = true;
      }
      if (await this.copies.clearDeliveryResponses(id, trx)) changed = true;
      if (await this.copies.clearWebCallTokenContext(id, trx)) changed = true;
      // The contact may be called again (a retry): without its context from now on.
      if (call.contact_id && (await this.copies.clearContactContext(call.contact_id, trx))) changed = true;
    });
    if (changed && options.emptyWal !== false) await this.emptyWal();
    return (await this.calls.findById(id))!;
  }

  /** Empties the WAL of what removals left in it; false when another process reads it (a retry follows). */
  emptyWal(): Promise<boolean> {
    return this.wal.run();
  }
}
