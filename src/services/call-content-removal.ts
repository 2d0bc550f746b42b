import { rm } from "node:fs/promises";
import { ApiError } from "../core/api-error.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import { CallsRepository, ENDED_CALL_STATUSES, type CallRecord, type CallStatus } from "../db/repositories/calls.js";
import { EventsRepository } from "../db/repositories/events.js";
import type { CallEvents } from "./call-events.js";
import { findOwned } from "./ownership.js";

const NOT_FOUND = { code: "call_not_found", message: "No call with this id" };

/**
 * Removes what was said on an ended call, for privacy requests (DELETE /v1/calls/{id}): the
 * recording file, the transcript, the analysis (and its outcome), the agent's actions (read
 * from the conversation) and the personalisation context; and the same content from the
 * call's stored events, so GET /v1/events and later deliveries no longer carry it. The
 * billing record stays: the call's status, numbers, times, duration, charge and latency, and
 * the ledger. Appointments booked on the call are their own records (cancel them apart).
 */
export class CallContentRemoval {
  private readonly calls: CallsRepository;
  private readonly events: EventsRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { events: CallEvents },
  ) {
    this.calls = new CallsRepository(db);
    this.events = new EventsRepository(db);
  }

  async remove(accountId: string, id: string): Promise<CallRecord> {
    const call = findOwned(await this.calls.findById(id), accountId, NOT_FOUND);
    if (!(ENDED_CALL_STATUSES as readonly CallStatus[]).includes(call.status)) {
      throw new ApiError(409, "call_not_ended", `Call ${id} is ${call.status}: end it first (POST /v1/calls/${id}/end), then delete its content`);
    }
    // The model writing the analysis would put content back once it answers.
    if (call.analysis_pending) throw new ApiError(409, "call_analysis_pending", `Call ${id}'s analysis is still being written (up to a minute after the call): try again shortly`);
    // The recording goes first: a failure after it leaves less behind, never more.
    if (call.recording_path) await rm(call.recording_path, { force: true });
    const removed = { transcript: null, recording_path: null, analysis: null, outcome: null, actions: null, context: {}, updated_at: nowIso() };
    await this.db.transaction().execute(async (trx) => {
      await this.calls.update(id, removed, trx);
      for (const event of await this.events.forCall(id, trx)) {
        const data = this.deps.events.withoutContent(event.name, event.data, call, { ...call, ...removed });
        if (JSON.stringify(data) !== JSON.stringify(event.data)) await this.events.replaceData(event.id, data, trx);
      }
    });
    return (await this.calls.findById(id))!;
  }
}
