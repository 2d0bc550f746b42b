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

/** What happened at the end of a call that the row alone does not say. */
export interface CallEndDetails {
  /** Where a transferred call was handed. */
  transferNumber?: string | null;
  /** Why a call failed, when Parley refused it (e.g. `insufficient_credits` when it was to be dialled). */
  failureReason?: string;
}

/** Told of a call's status change inside its transaction (see CallEvents.follow). */
export type CallFollower = (call: CallRecord, from: CallStatus | null, trx: Db, details: CallEndDetails) => Promise<void>;

/**
 * Stores call events in the outbox, inside the transaction that changes the call, so an
 * event exists exactly when its change does. A call created with `webhook_url` has its
 * events delivered there instead of to the account's webhooks.
 */
export class CallEvents {
  private readonly followers: CallFollower[] = [];

  constructor(
    private readonly outbox: Outbox,
    private readonly recordingLinks: RecordingLinks,
  ) {}

  /**
   * Runs `follower` on every status change of every call, inside the change's transaction:
   * what depends on a call's status (a campaign contact's) then changes with it or not at all.
   */
  follow(follower: CallFollower): void {
    this.followers.push(follower);
  }

  /** Records the events of `call` (as stored after the change) entering its status from `from`. */
  async entered(call: CallRecord, from: CallStatus | null, trx: Db, details: CallEndDetails = {}): Promise<void> {
    for (const follower of this.followers) await follower(call, from, trx, details);
    await this.outbox.append(
      callEventNames(from, call).map((name) => ({
        accountId: call.account_id,
        name,
        callId: call.id,
        callWebhookUrl: call.webhook_url,
        data: this.payload(name, call, details),
      })),
      trx,
    );
  }

  private payload(name: EventName, call: CallRecord, details: CallEndDetails): Record<string, unknown> {
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
      default:
        return {
          ...base,
          ended_at: call.ended_at,
          duration_seconds: call.duration ?? 0,
          outcome: call.status === "transferred" ? "transferred" : ((call.analysis?.outcome as string | undefined) ?? null),
          transcript: transcriptText(call.transcript ?? []),
          recording_url: this.recordingLinks.url(call),
          extracted_data: (call.analysis?.extracted_data as Record<string, unknown> | undefined) ?? {},
          ...(call.status === "transferred" ? { transfer_number: details.transferNumber ?? null } : {}),
          ...(details.failureReason ? { reason: details.failureReason } : {}),
        };
    }
  }
}

/** The transcript as one text, a line per turn: "Agent: ..." / "Caller: ...". */
function transcriptText(segments: readonly TranscriptSegment[]): string {
  return segments.map((s) => `${s.role === "agent" ? "Agent" : "Caller"}: ${s.content}`).join("\n");
}
