import type { Logger } from "pino";
import type { Db } from "../db/database.js";
import type { CallRecord, CallStatus, TranscriptSegment } from "../db/repositories/calls.js";
import type { EventName } from "./event-names.js";
import type { Outbox } from "./outbox.js";
import type { RecordingLinks } from "./recording-links.js";

/**
 * The events a call emits when it enters `to` from `from` (null: the call starts connected,
 * as inbound and web calls do). Names are the subscription list's; `call.failed` stands for
 * `failed`, `busy` and `no_answer` alike (DESIGN "Calls and events").
 */
export function callEventNames(from: CallStatus | null, to: CallRecord): EventName[] {
  const names: EventName[] = [];
  switch (to.status) {
    case "queued":
      return names;
    case "ringing":
      names.push("call.started", "call.ringing");
      return names;
    case "in_progress":
      if (from === null) names.push("call.started");
      names.push("call.answered");
      return names;
    case "completed":
      names.push("call.completed");
      break;
    case "transferred":
      names.push("call.transferred");
      break;
    case "failed":
    case "busy":
    case "no_answer":
      names.push("call.failed");
      break;
  }
  if (to.transcript && to.transcript.length > 0) names.push("call.transcript.ready");
  if (to.recording_path) names.push("call.recording.ready");
  return names;
}

/** Told of a call's status change inside its transaction (see CallEvents.follow). */
export type CallFollower = (call: CallRecord, from: CallStatus | null, trx: Db) => Promise<void>;

/**
 * Stores call events in the outbox, inside the transaction that changes the call, so an
 * event exists exactly when its change does. A call created with `webhook_url` has its
 * events delivered there instead of to the account's webhooks.
 *
 * A connected call's end events (`call.completed`, `call.transferred` or `call.failed`, then
 * `call.transcript.ready` and `call.recording.ready`) carry its analysis: while a model still
 * writes it (`analysis_pending`), they wait and are written with it (`analysed`).
 */
export class CallEvents {
  private readonly followers: CallFollower[] = [];

  constructor(
    private readonly outbox: Outbox,
    private readonly recordingLinks: RecordingLinks,
    /** Told of each event as it is stored (see `logged`). */
    private readonly logger?: Logger,
  ) {}

  /**
   * Runs `follower` on every status change of every call, inside the change's transaction:
   * what depends on a call's status (a campaign contact's) then changes with it or not at all.
   */
  follow(follower: CallFollower): void {
    this.followers.push(follower);
  }

  /** Records the events of `call` (as stored after the change) entering its status from `from`. */
  async entered(call: CallRecord, from: CallStatus | null, trx: Db): Promise<void> {
    for (const follower of this.followers) await follower(call, from, trx);
    if (!call.analysis_pending) await this.append(call, callEventNames(from, call), trx);
  }

  /** Records the end events of a connected call whose analysis has just been stored. */
  async analysed(call: CallRecord, trx: Db): Promise<void> {
    await this.append(call, callEventNames("in_progress", call), trx);
  }

  /**
   * A stored event's data once the call's content is removed (`before` -> `after`): every
   * field its payload takes from that content gets the value it has without it; the rest
   * (the status and numbers as they were then) stays as stored.
   */
  withoutContent(name: string, data: Record<string, unknown>, before: CallRecord, after: CallRecord): Record<string, unknown> {
    const had = this.payload(name as EventName, before);
    const left = this.payload(name as EventName, after);
    const out = { ...data };
    for (const [key, value] of Object.entries(left)) {
      if (key in out && JSON.stringify(had[key as keyof typeof had]) !== JSON.stringify(value)) out[key] = value;
    }
    return out;
  }

  private async append(call: CallRecord, names: readonly EventName[], trx: Db): Promise<void> {
    await this.outbox.append(
      names.map((name) => ({ accountId: call.account_id, name, callId: call.id, callWebhookUrl: call.webhook_url, data: this.payload(name, call) })),
      trx,
    );
    for (const name of names) this.logged(name, call);
  }

  /**
   * One log line per event (message `call event`): the call's ids, status and numbers (masked
   * by the logger), and for an end its outcome and length; never its transcript, summary,
   * extracted data or metadata (personal data), nor its recording link (a credential).
   */
  private logged(name: EventName, call: CallRecord): void {
    if (!this.logger?.isLevelEnabled("info")) return;
    const ended = call.ended_at !== null && !name.startsWith("call.transcript") && !name.startsWith("call.recording");
    this.logger.info(
      {
        event: name,
        call_id: call.id,
        account_id: call.account_id,
        agent_id: call.agent_id,
        campaign_id: call.campaign_id ?? undefined,
        direction: call.direction,
        status: call.status,
        phone_number: call.phone_number ?? undefined,
        from_number: call.from_number ?? undefined,
        ...(ended ? { outcome: call.outcome, duration_s: call.duration ?? 0, reason: call.failure_reason ?? undefined } : {}),
      },
      "call event",
    );
  }

  private payload(name: EventName, call: CallRecord): Record<string, unknown> {
    const base = {
      call_id: call.id,
      agent_id: call.agent_id,
      campaign_id: call.campaign_id,
      direction: call.direction,
      status: call.status,
      phone_number: call.phone_number,
      from_number: call.from_number,
      metadata: call.metadata,
    };
    switch (name) {
      case "call.started":
      case "call.ringing":
        return base;
      case "call.answered":
        return { ...base, answered_at: call.answered_at };
      case "call.transcript.ready":
        return { ...base, transcript: transcriptText(call.transcript ?? []) };
      case "call.recording.ready":
        return { ...base, recording_url: this.recordingLinks.url(call) };
      default: {
        const analysis = call.analysis;
        return {
          ...base,
          ended_at: call.ended_at,
          duration_seconds: call.duration ?? 0,
          outcome: call.outcome,
          transcript: transcriptText(call.transcript ?? []),
          recording_url: this.recordingLinks.url(call),
          extracted_data: analysis?.extracted_data ?? {},
          sentiment: analysis?.sentiment ?? null,
          summary: analysis?.summary ?? null,
          success: analysis?.success ?? null,
          ...(call.status === "transferred" ? { transfer_number: call.transfer_number } : {}),
          ...(call.failure_reason ? { reason: call.failure_reason } : {}),
        };
      }
    }
  }
}

/** The transcript as one text, a line per turn: "Agent: ..." / "Caller: ...". */
function transcriptText(segments: readonly TranscriptSegment[]): string {
  return segments.map((s) => `${s.role === "agent" ? "Agent" : "Caller"}: ${s.content}`).join("\n");
}
