import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import { CampaignContactsRepository, type ContactRecord, type ContactStatus } from "../db/repositories/campaign-contacts.js";
import { CampaignsRepository, type CampaignRecord } from "../db/repositories/campaigns.js";
import { ENDED_CALL_STATUSES, type CallRecord, type CallStatus } from "../db/repositories/calls.js";
import type { CampaignEvents } from "./campaign-events.js";
import { DO_NOT_CALL_OUTCOME } from "./do-not-call.js";
import { INTERRUPTED } from "./live-calls.js";

/** What becomes of a contact when its call ends. */
type Next =
  | { status: Exclude<ContactStatus, "pending" | "calling">; failed?: boolean; reason?: string | null }
  | { status: "pending"; retryInMinutes: number; failed?: boolean; undoAttempt?: boolean };

/**
 * Moves a campaign contact on when its call ends, inside the transaction that ends the call
 * (registered with CallEvents.follow), so a crash can never leave a call ended and its
 * contact still `calling`:
 * - answered (`completed`, `transferred`): `completed`; `do_not_call` when the callee asked
 *   not to be called again (the call's outcome);
 * - `busy`, `no_answer`: with `retry_no_answer`, `pending` again after `retry_delay_minutes`
 *   while attempts are left (`max_attempts`); else final with that status;
 * - `failed`: retried once (after the retry delay), then final; a call the previous process
 *   left live (`interrupted`) is final at once, since the callee may have been reached;
 * - refused before dialling for want of credit: back to `pending` (the attempt did not
 *   happen) and the campaign is paused `insufficient_credits`; refused for a number on the
 *   do-not-call list: `skipped`.
 * A contact whose campaign was cancelled meanwhile ends `cancelled` instead of waiting for a retry.
 */
export class CampaignCallOutcomes {
  constructor(
    private readonly deps: {
      events: CampaignEvents;
      now: () => number;
      minuteMs: number;
      /** Told of every contact moved on (inside the transaction: act on it after, e.g. on a timer). */
      onMoved: (campaignId: string) => void;
    },
  ) {}

  readonly follow = async (call: CallRecord, _from: CallStatus | null, trx: Db): Promise<void> => {
    if (!call.contact_id || !(ENDED_CALL_STATUSES as readonly CallStatus[]).includes(call.status)) return;
    const contacts = new CampaignContactsRepository(trx);
    const contact = await contacts.findById(call.contact_id, trx);
    // Only the contact's current attempt moves it.
    if (!contact || contact.status !== "calling" || contact.call_id !== call.id) return;
    const campaigns = new CampaignsRepository(trx);
    const campaign = (await campaigns.findById(contact.campaign_id, trx))!;
    const next = this.next(call, contact, campaign);
    const at = nowIso();
    if (next.status === "pending") {
      const cancelled = campaign.status === "cancelled";
      await contacts.move(
        contact.id,
        "calling",
        {
          status: cancelled ? "cancelled" : "pending",
          next_attempt_at: cancelled ? null : this.deps.now() + next.retryInMinutes * this.deps.minuteMs,
          attempts: next.undoAttempt ? contact.attempts - 1 : contact.attempts,
          failures: contact.failures + (next.failed ? 1 : 0),
        },
        at,
        trx,
      );
      if (next.undoAttempt && (await campaigns.transition(campaign.id, ["running", "scheduled"], "paused", at, trx, { paused_reason: "insufficient_credits" }))) {
        await this.deps.events.record("campaign.paused", (await campaigns.findById(campaign.id, trx))!, trx);
      }
    } else {
      await contacts.move(contact.id, "calling", { status: next.status, failures: contact.failures + (next.failed ? 1 : 0), reason: next.reason ?? null }, at, trx);
    }
    // A slot of the campaign is free (and it may be done).
    this.deps.onMoved(campaign.id);
  };

  private next(call: CallRecord, contact: ContactRecord, campaign: CampaignRecord): Next {
    const delay = campaign.retry_delay_minutes;
    switch (call.status) {
      case "completed":
      case "transferred":
        return call.outcome === DO_NOT_CALL_OUTCOME ? { status: "do_not_call" } : { status: "completed" };
      case "busy":
      case "no_answer":
        return campaign.retry_no_answer && contact.attempts < campaign.max_attempts ? { status: "pending", retryInMinutes: delay } : { status: call.status };
      default:
        if (call.failure_reason === "insufficient_credits") return { status: "pending", retryInMinutes: 0, undoAttempt: true };
        if (call.failure_reason === DO_NOT_CALL_OUTCOME) return { status: "skipped", reason: DO_NOT_CALL_OUTCOME };
        if (call.failure_reason === INTERRUPTED) return { status: "failed", failed: true, reason: INTERRUPTED };
        if (contact.failures === 0) return { status: "pending", retryInMinutes: delay, failed: true };
        return { status: "failed", failed: true, reason: call.failure_reason };
    }
  }
}
