import { existsSync } from "node:fs";
import type { Config } from "../config.js";
import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import { CallsRepository, LIVE_CALL_STATUSES, unfinishedCallFields, type CallDirection, type CallRecord, type CallStatus, type TranscriptSegment } from "../db/repositories/calls.js";
import type { AccountsService } from "./accounts.js";
import type { CallAction, CallEndReason, CallLatency } from "../../engine/index.js";
import type { CallEvents } from "./call-events.js";
import type { CallResults } from "./call-results.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import { billedMinutes } from "./call-credit.js";
import type { CreditReservations } from "./credit-reservations.js";
import { insertWithinLimit, type RowLimit } from "./limited-insert.js";
import { recordingFile } from "./recording-files.js";
import { parseS3Ref, type RecordingStore } from "./recording-store.js";

export interface LiveCallStart {
  /** The id promised to the client before it connected (a browser call's token); else a new one. */
  callId?: string;
  account: AccountRecord;
  agent: AgentRecord;
  direction: CallDirection;
  phoneNumber: string | null;
  fromNumber: string | null;
  record: boolean;
  maxDuration: number;
  metadata: Record<string, unknown>;
  context: Record<string, unknown>;
}

export interface LiveCallEnd {
  status: Extract<CallStatus, "completed" | "transferred" | "failed">;
  durationMs: number;
  transcript: TranscriptSegment[];
  recordingPath: string | null;
  /** The engine's end reason; absent when the call was closed from its record (no media ran here). */
  endReason?: CallEndReason;
  /** What the agent did, as the engine reported it; absent when closed from its record (then rebuilt from what was stored). */
  actions?: CallAction[];
  /** Each agent turn's latency; absent when no media ran here. */
  latency?: CallLatency;
  /** Where a transferred call was handed. */
  transferNumber?: string | null;
  /** Why Parley ended the call as failed (`interrupted`). */
  failureReason?: string;
}

/** The failure reason of a call the previous process left live. */
export const INTERRUPTED = "interrupted";

/**
 * Calls that are connected as they start (web and inbound media streams): the row goes
 * straight to `in_progress`; at the end the call is closed and charged in one transaction,
 * exactly once.
 */
export class LiveCallsService {
  private readonly calls: CallsRepository;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly deps: {
      accounts: AccountsService;
      events: CallEvents;
      lifecycle: CallLifecycle;
      reservations: CreditReservations;
      results: CallResults;
      recordings: RecordingStore;
      /** This node: the calls that start here run their media here. */
      nodeId: string;
    },
  ) {
    this.calls = new CallsRepository(db);
  }

  /**
   * Refuses, as `begin` would, a call that could not start now (agent inactive, no credit,
   * the concurrent-call limit reached), without inserting anything: a media endpoint asks
   * before it accepts the connection. `begin` checks again, atomically with its insert.
   */
  async checkStartable(input: LiveCallStart): Promise<void> {
    await this.requireStartable(input);
    const live = this.liveLimit(input.account);
    if ((await live.count(this.db)) >= live.limit) throw live.refusal();
  }

  async begin(input: LiveCallStart): Promise<CallRecord> {
    const { account, agent } = input;
    await this.requireStartable(input);
    const at = nowIso();
    const call: CallRecord = {
      id: input.callId ?? newId("call"),
      account_id: account.id,
      agent_id: agent.id,
      campaign_id: null,
      contact_id: null,
      direction: input.direction,
      status: "in_progress",
      phone_number: input.phoneNumber,
      from_number: input.fromNumber,
      metadata: input.metadata,
      context: input.context,
      record: input.record,
      max_duration: input.maxDuration,
      webhook_url: null,
      ...unfinishedCallFields(),
      node_id: this.deps.nodeId,
      created_at: at,
      answered_at: at,
      updated_at: at,
    };
    await insertWithinLimit(this.db, this.liveLimit(account), async (trx) => {
      // Its first minute is held with the row that makes it live: both or neither.
      await this.deps.reservations.reserveFirstMinute(trx, account.id, call.id);
      await this.calls.insert(call, trx);
      await this.deps.events.entered(call, null, trx);
    });
    return call;
  }

  private async requireStartable({ account, agent }: LiveCallStart): Promise<void> {
    if (agent.status !== "active") throw new ApiError(409, "agent_inactive", `Agent ${agent.id} is inactive`);
    // A minute left after what the account's calls under way hold (see CreditReservations).
    if (!(await this.deps.reservations.coversMinute(account.id))) throw await this.deps.reservations.refusal(account.id);
  }

  /** The account's concurrent-call limit, over its `ringing` and `in_progress` calls. */
  private liveLimit(account: AccountRecord): RowLimit {
    const limit = this.deps.accounts.limitsOf(account).concurrentCalls;
    return {
      limit,
      accountId: account.id,
      count: (trx) => this.calls.countInStatus(account.id, LIVE_CALL_STATUSES, trx),
      refusal: () => new ApiError(429, "rate_limit_exceeded", `The account already has ${limit} live calls, its concurrent-call limit`),
    };
  }

  /**
   * Closes a live call and charges it, with its analysis (see CallResults), in one
   * transaction. A call that is no longer `in_progress` (already closed) is left alone: false.
   */
  async end(callId: string, end: LiveCallEnd): Promise<boolean> {
    const at = nowIso();
    const recordingPath = await this.stored(callId, end.recordingPath);
    const closed = await this.close(callId, { ...end, recordingPath }, at);
    if (!closed && recordingPath !== end.recordingPath && recordingPath && (await this.calls.findById(callId))?.recording_path !== recordingPath) {
      // Closed meanwhile without it: nothing refers to the upload, which must not stay unknown in the bucket.
      await this.deps.recordings.remove(recordingPath).catch(() => undefined);
    }
    return closed;
  }

  /**
   * The recording the engine wrote, handed to the recording store as the call closes (a
   * bucket's store uploads it and deletes the file): the reference to keep. A reference
   * already stored is kept as it is.
   */
  private async stored(callId: string, recording: string | null): Promise<string | null> {
    if (!recording || parseS3Ref(recording)) return recording;
    return this.deps.recordings.save(callId, recording);
  }

  /**
   * Live calls still running: `updated_at` moves on, the last moment a crash would leave them
   * known alive, and their transcript so far is stored, what the start-up recovery keeps.
   */
  async heartbeat(calls: ReadonlyArray<{ id: string; transcript: TranscriptSegment[] }>): Promise<void> {
    await this.calls.touch(calls, nowIso());
  }

  /**
   * Closes `calls`, left live by a node that stopped (it crashed or was killed; see
   * NodePresence): `in_progress` ones `failed`, their duration counted from the answer to their
   * last heartbeat, and billed for that, once (closing locks the call and needs it
   * `in_progress`, so a second node or pass finds nothing), with the transcript their last
   * heartbeat stored. Calls left `ringing` never connected: `failed`, not billed. Both carry
   * the reason `interrupted` (a campaign does not dial such a contact again: it may have been
   * reached). Returns how many were closed.
   */
  async recoverInterrupted(calls: readonly CallRecord[]): Promise<number> {
    let closed = 0;
    for (const call of calls) {
      if (call.status === "ringing") {
        if (await this.deps.lifecycle.unanswered(call.id, "failed", INTERRUPTED)) closed++;
        continue;
      }
      const lastAlive = call.updated_at;
      const durationMs = call.answered_at ? Math.max(0, Date.parse(lastAlive) - Date.parse(call.answered_at)) : 0;
      const end: LiveCallEnd = {
        status: "failed",
        durationMs,
        transcript: call.transcript ?? [],
        recordingPath: await this.stored(call.id, this.interruptedRecording(call)),
        failureReason: INTERRUPTED,
      };
      if (await this.close(call.id, end, lastAlive)) closed++;
    }
    return closed;
  }

  /**
   * The recording a recorded call was writing when its process died: the file holds every
   * sample written until then (see WavFileWriter), so it is kept with the call rather than
   * left on disk unknown to it (and to the deletion of its content).
   */
  private interruptedRecording(call: CallRecord): string | null {
    if (call.recording_path || !call.record) return call.recording_path;
    const file = recordingFile(this.config.dataDir, call.id);
    return existsSync(file) ? file : null;
  }

  private async close(callId: string, end: LiveCallEnd, at: string): Promise<boolean> {
    let pending = false;
    const closed = await this.db.transaction().execute(async (trx) => {
      await this.calls.lockForChange(callId, trx);
      const call = await this.calls.findById(callId, trx);
      // Charged (or closed by someone else): the credit it held is the balance's again, with the charge.
      await this.deps.reservations.release(callId, trx);
      if (!call || call.status !== "in_progress") return false;
      const duration = Math.round(end.durationMs / 1000);
      const credits = billedMinutes(duration) * this.config.credits.perMinute;
      const ended: CallRecord = {
        ...call,
        status: end.status,
        duration,
        ended_at: at,
        updated_at: nowIso(),
        transcript: end.transcript,
        recording_path: end.recordingPath,
        billed_credits: credits,
        end_reason: end.endReason ?? null,
        transfer_number: end.transferNumber ?? null,
        failure_reason: end.failureReason ?? null,
        latency: end.latency ?? null,
      };
      const stored = { ...ended, ...(await this.deps.results.atEnd(ended, end.actions ?? null, trx)) };
      await this.calls.update(callId, stored, trx);
      await this.deps.events.entered(stored, "in_progress", trx);
      pending = stored.analysis_pending;
      if (credits > 0) {
        await this.deps.accounts.recordLedger(
          { id: newId("ledger"), account_id: call.account_id, amount: -credits, reason: "call", call_id: callId, description: `${duration} s call`, created_at: at },
          trx,
        );
      }
      return true;
    });
    if (closed && pending) this.deps.results.finishLater(callId);
    return closed;
  }
}
