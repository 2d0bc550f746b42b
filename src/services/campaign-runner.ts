import type { Logger } from "pino";
import { newId } from "../core/ids.js";
import { PassLoop } from "../core/pass-loop.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { AgentsRepository } from "../db/repositories/agents.js";
import { CampaignContactsRepository, type ContactRecord } from "../db/repositories/campaign-contacts.js";
import { CampaignsRepository, type CampaignRecord } from "../db/repositories/campaigns.js";
import { ACTIVE_CALL_STATUSES, CallsRepository, unfinishedCallFields, type CallRecord } from "../db/repositories/calls.js";
import { PhoneNumbersRepository } from "../db/repositories/phone-numbers.js";
import { MAX_CALL_DURATION_SECONDS } from "./call-limits.js";
import type { AccountsService } from "./accounts.js";
import { DEFAULT_CALLING_HOURS, contactZone, isOpen } from "../core/calling-hours.js";
import type { ParleyMetrics } from "../observability/metrics.js";
import type { CampaignEvents } from "./campaign-events.js";
import type { CreditReservations } from "./credit-reservations.js";
import type { DoNotCallService } from "./do-not-call.js";

/** Why the runner paused a campaign (`paused_reason`); a pause on request is `requested`. */
export const RUNNER_PAUSE_REASONS = ["insufficient_credits", "agent_inactive", "agent_deleted", "no_from_number"] as const;
export type RunnerPauseReason = (typeof RUNNER_PAUSE_REASONS)[number];

export interface CampaignRunnerConfig {
  /** How often the runner looks even when nothing woke it (retries falling due, calling hours opening). */
  pollMs: number;
  /** Milliseconds since the epoch: injected so tests can move through calling hours. */
  now: () => number;
  /** Credits one minute of call costs. */
  perMinute: number;
}

/**
 * Dials campaigns. Each pass starts the scheduled campaigns whose time has come, then turns
 * due contacts of running campaigns into queued calls, which the CallDispatcher places like
 * any call:
 * - a contact is claimed and its call created in one transaction, so a crash never calls a
 *   contact twice nor loses one (what becomes of it when the call ends: CampaignCallOutcomes);
 * - at most `max_concurrent` of a campaign's calls are queued or live at once, and the
 *   account's queued and live calls together stay within its concurrent-call limit, so a
 *   campaign never fills the queue: a call created with POST /v1/calls waits at most for one
 *   call to end, and the dispatcher places it before any campaign call (fairness rule);
 * - campaigns of one account take turns, one call each, so two campaigns share the account's
 *   slots evenly;
 * - a contact is dialled only inside the calling hours of its zone, never if its number is on
 *   the do-not-call list (then `skipped`), and only if the balance less what the account's
 *   calls hold pays a minute more (else the campaign is paused `insufficient_credits`);
 * - a campaign whose agent is inactive or gone is paused with that reason;
 * - a running campaign whose contacts are all final is `completed`.
 * Passes never overlap; a pass is requested by `wake` (a campaign changed, a call ended) and
 * runs every `pollMs` anyway.
 */
export class CampaignRunner {
  private readonly campaigns: CampaignsRepository;
  private readonly contacts: CampaignContactsRepository;
  private readonly calls: CallsRepository;
  private readonly agents: AgentsRepository;
  private readonly numbers: PhoneNumbersRepository;
  private readonly loop: PassLoop;

  constructor(
    private readonly db: Db,
    private readonly config: CampaignRunnerConfig,
    private readonly deps: {
      accounts: AccountsService;
      reservations: CreditReservations;
      doNotCall: DoNotCallService;
      events: CampaignEvents;
      /** Told of every call queued: the dispatcher places it. */
      queued: (accountId: string) => void;
      logger: Logger;
      metrics: ParleyMetrics;
    },
  ) {
    this.campaigns = new CampaignsRepository(db);
    this.contacts = new CampaignContactsRepository(db);
    this.calls = new CallsRepository(db);
    this.agents = new AgentsRepository(db);
    this.numbers = new PhoneNumbersRepository(db);
    this.loop = new PassLoop({
      pass: () => this.passOnce(),
      next: () => this.config.pollMs,
      onError: (err) => this.deps.logger.error({ err }, "campaign runner pass failed"),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** No more passes; resolves when the one under way has finished. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Asks for a pass soon (several requests make one pass). */
  wake(): void {
    this.loop.wake();
  }

  /** Resolves once no pass is under way or requested (tests wait on it). */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  private get stopped(): boolean {
    return this.loop.stopped;
  }

  private async passOnce(): Promise<void> {
    const now = this.config.now();
    for (const campaign of await this.campaigns.allInStatus("scheduled")) {
      if (campaign.schedule === null || Date.parse(campaign.schedule) <= now) await this.begin(campaign);
    }
    const running = await this.campaigns.allInStatus("running");
    const byAccount = new Map<string, CampaignRecord[]>();
    for (const campaign of running) byAccount.set(campaign.account_id, [...(byAccount.get(campaign.account_id) ?? []), campaign]);
    for (const [accountId, campaigns] of byAccount) {
      if (this.stopped) return;
      await this.fillAccount(accountId, campaigns, now);
    }
  }

  /** `scheduled` -> `running`; `campaign.started` the first time only (not on a resume). */
  private async begin(campaign: CampaignRecord): Promise<void> {
    await this.resolveZones(campaign);
    const at = nowIso();
    await this.db.transaction().execute(async (trx) => {
      const first = campaign.started_at === null;
      if (!(await this.campaigns.transition(campaign.id, ["scheduled"], "running", at, trx, first ? { started_at: at } : {}))) return;
      if (first) await this.deps.events.record("campaign.started", (await this.campaigns.findById(campaign.id, trx))!, trx);
    });
  }

  /** Contacts stored before the runner existed have no zone key yet. */
  private async resolveZones(campaign: CampaignRecord): Promise<void> {
    for (const contact of await this.contacts.unzoned(campaign.id)) {
      await this.contacts.setZone(contact.id, contactZone(contact.phone, contact.timezone, campaign.timezone) ?? "UTC");
    }
  }

  /**
   * Queues calls for the account's running campaigns, one per campaign in turn, while the
   * account has room; then completes the campaigns that have nothing left to do.
   */
  private async fillAccount(accountId: string, campaigns: CampaignRecord[], now: number): Promise<void> {
    const account = await this.deps.accounts.find(accountId);
    if (!account) return;
    // An account at its limit has nothing to queue: no need to look at each campaign.
    if ((await this.calls.countInStatus(account.id, ACTIVE_CALL_STATUSES)) >= this.deps.accounts.limitsOf(account).concurrentCalls) {
      for (const campaign of campaigns) await this.completeIfDone(campaign);
      return;
    }
    const active = new Set<CampaignRecord>();
    for (const campaign of campaigns) if (await this.ready(campaign)) active.add(campaign);
    const openZones = new Map<string, string[]>();
    for (const campaign of active) openZones.set(campaign.id, await this.openZones(campaign, now));
    let queued = 0;
    while (active.size > 0 && !this.stopped) {
      for (const campaign of [...active]) {
        const outcome = await this.queueNext(account, campaign, openZones.get(campaign.id)!, now);
        if (outcome === "queued") {
          queued++;
        } else if (outcome === "account_full") {
          active.clear();
          break;
        } else {
          active.delete(campaign);
        }
      }
    }
    if (queued > 0) this.deps.queued(accountId);
    for (const campaign of campaigns) await this.completeIfDone(campaign);
  }

  /** The campaign may dial: its agent is usable (else it is paused with the reason). */
  private async ready(campaign: CampaignRecord): Promise<boolean> {
    const agent = await this.agents.findById(campaign.agent_id);
    if (!agent || agent.account_id !== campaign.account_id) return !(await this.pause(campaign, "agent_deleted"));
    if (agent.status !== "active") return !(await this.pause(campaign, "agent_inactive"));
    return true;
  }

  private async openZones(campaign: CampaignRecord, now: number): Promise<string[]> {
    const hours = campaign.calling_hours ?? DEFAULT_CALLING_HOURS;
    const zones = await this.contacts.waitingZones(campaign.id);
    return zones.filter((zone): zone is string => zone !== null && isOpen(hours, zone, now));
  }

  /**
   * Queues one call of the campaign: `queued`; or says why not: the campaign is at its
   * `max_concurrent` or has nothing due (`campaign_done` for this pass), the account has no
   * room (`account_full`), or the campaign was paused (`paused`).
   */
  private async queueNext(account: AccountRecord, campaign: CampaignRecord, openZones: string[], now: number): Promise<"queued" | "campaign_done" | "account_full" | "paused"> {
    const limit = this.deps.accounts.limitsOf(account).concurrentCalls;
    const accountCalls = await this.calls.countInStatus(account.id, ACTIVE_CALL_STATUSES);
    if (accountCalls >= limit) return "account_full";
    if ((await this.calls.countOfCampaign(campaign.id, ACTIVE_CALL_STATUSES)) >= campaign.max_concurrent) return "campaign_done";
    for (;;) {
      const [contact] = await this.contacts.due(campaign.id, openZones, now, 1);
      if (!contact) return "campaign_done";
      if (await this.deps.doNotCall.isListed(account.id, contact.phone)) {
        await this.contacts.move(contact.id, "pending", { status: "skipped", reason: "do_not_call", next_attempt_at: null }, nowIso(), this.db);
        continue;
      }
      // What the account's calls under way hold, and a minute for each call queued before it is dialled.
      const fresh = (await this.deps.accounts.find(account.id)) ?? account;
      const queuedCalls = await this.calls.countInStatus(account.id, "queued");
      const spare = fresh.credit_balance - (await this.deps.reservations.heldBy(account.id)) - queuedCalls * this.config.perMinute;
      if (spare < this.config.perMinute) return (await this.pause(campaign, "insufficient_credits")) ? "paused" : "campaign_done";
      const from = campaign.from_number ?? (await this.numbers.oldestActive(account.id))?.phone_number;
      if (!from) return (await this.pause(campaign, "no_from_number")) ? "paused" : "campaign_done";
      const claimed = await this.claim(account, campaign, contact, from);
      if (claimed !== "queued") return claimed;
      this.deps.metrics.campaignCallQueued();
      return "queued";
    }
  }

  /**
   * Claims the contact and creates its call, in one transaction, if the account and the
   * campaign still have room: `queued`, else which one is full (`campaign_done` also when the
   * contact was claimed meanwhile). The counts seen by queueNext are checked again here under
   * the account's lock, since on PostgreSQL another node's runner may have queued calls of the
   * account since (each node's passes do not overlap, but two nodes' do).
   */
  private async claim(account: AccountRecord, campaign: CampaignRecord, contact: ContactRecord, from: string): Promise<"queued" | "account_full" | "campaign_done"> {
    const at = nowIso();
    const call: CallRecord = {
      id: newId("call"),
      account_id: campaign.account_id,
      agent_id: campaign.agent_id,
      campaign_id: campaign.id,
      contact_id: contact.id,
      direction: "outbound",
      status: "queued",
      phone_number: contact.phone,
      from_number: from,
      metadata: { campaign_id: campaign.id, contact_id: contact.id },
      context: contact.context,
      record: true,
      max_duration: MAX_CALL_DURATION_SECONDS,
      webhook_url: null,
      ...unfinishedCallFields(),
      created_at: at,
      answered_at: null,
      updated_at: at,
    };
    const limit = this.deps.accounts.limitsOf(account).concurrentCalls;
    return this.db.transaction().execute(async (trx) => {
      await holdAccountLock(trx, account.id);
      if ((await this.calls.countInStatus(account.id, ACTIVE_CALL_STATUSES, trx)) >= limit) return "account_full";
      if ((await this.calls.countOfCampaign(campaign.id, ACTIVE_CALL_STATUSES, trx)) >= campaign.max_concurrent) return "campaign_done";
      if (!(await this.contacts.claim(contact.id, call.id, at, trx))) return "campaign_done";
      await this.calls.insert(call, trx);
      return "queued";
    });
  }

  /** Pauses a scheduled or running campaign with `reason`; false when it was not (any more). */
  private async pause(campaign: CampaignRecord, reason: RunnerPauseReason): Promise<boolean> {
    const paused = await this.db.transaction().execute(async (trx) => {
      if (!(await this.campaigns.transition(campaign.id, ["scheduled", "running"], "paused", nowIso(), trx, { paused_reason: reason }))) return false;
      await this.deps.events.record("campaign.paused", (await this.campaigns.findById(campaign.id, trx))!, trx);
      return true;
    });
    if (paused) this.deps.logger.info({ campaign_id: campaign.id, account_id: campaign.account_id, reason }, "campaign paused");
    return paused;
  }

  /** A running campaign with no contact pending or calling is `completed`. */
  private async completeIfDone(campaign: CampaignRecord): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      if (await this.contacts.hasOpen(campaign.id, trx)) return;
      const at = nowIso();
      if (!(await this.campaigns.transition(campaign.id, ["running"], "completed", at, trx, { finished_at: at }))) return;
      await this.deps.events.record("campaign.completed", (await this.campaigns.findById(campaign.id, trx))!, trx);
    });
  }
}
