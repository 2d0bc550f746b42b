import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { AgentsRepository } from "../db/repositories/agents.js";
import { CampaignContactsRepository, emptyContactCounts, type ContactCounts, type ContactRecord, type ContactStatus } from "../db/repositories/campaign-contacts.js";
import { CampaignsRepository, type CampaignChange, type CampaignFilters, type CampaignRecord, type CampaignStatus } from "../db/repositories/campaigns.js";
import { PhoneNumbersRepository } from "../db/repositories/phone-numbers.js";
import { CallsRepository, type CallRecord } from "../db/repositories/calls.js";
import { campaignResultsCsv } from "./campaign-results-csv.js";
import { DEFAULT_CALLING_HOURS, contactZone, nextOpening, type CallingDay, type CallingHours } from "../core/calling-hours.js";
import type { AccountsService } from "./accounts.js";
import type { CampaignEvents } from "./campaign-events.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { findOwned } from "./ownership.js";

/** What a campaign is created with (POST /v1/campaigns, validated; calling hours completed). */
export interface CreateCampaignInput {
  name: string;
  agent_id: string;
  contacts: Array<{ phone: string; context?: Record<string, unknown>; timezone?: string }>;
  settings?: {
    max_concurrent?: number;
    retry_no_answer?: boolean;
    schedule?: string | null;
    from_number?: string;
    max_attempts?: number;
    retry_delay_minutes?: number;
    calling_hours?: { start: string; end: string; days: CallingDay[] };
    timezone?: string | null;
  };
}

export const CAMPAIGN_LIMITS = {
  name: 200,
  /** Contacts per campaign; also what `include=contacts` returns at most. */
  contacts: 10_000,
  maxConcurrent: 50,
  /** `max_concurrent` when not given (lowered to the account's concurrent-call limit). */
  defaultMaxConcurrent: 5,
  /** Calls per contact at most (`settings.max_attempts`), and the default. */
  maxAttempts: 10,
  defaultMaxAttempts: 3,
  /** `settings.retry_delay_minutes` at most (a week), and the default. */
  retryDelayMinutes: 10_080,
  defaultRetryDelayMinutes: 60,
} as const;

/** Which statuses each request moves a campaign from, and to. */
const TRANSITIONS = {
  pause: { from: ["scheduled", "running"], to: "paused", change: { paused_reason: "requested" } },
  resume: { from: ["paused"], to: "scheduled", change: { paused_reason: null } },
  cancel: { from: ["scheduled", "running", "paused"], to: "cancelled", change: { paused_reason: null } },
} as const satisfies Record<string, { from: readonly CampaignStatus[]; to: CampaignStatus; change: CampaignChange }>;

export type CampaignAction = keyof typeof TRANSITIONS;

/** A campaign with its contacts' status counts and progress. */
export interface CampaignView extends CampaignRecord {
  counts: ContactCounts;
  /** Calls made for its contacts, retries included. */
  attempts: number;
  /** When a running campaign should be done at the recent rate; null when not running or no rate yet. */
  estimated_finish_at: string | null;
}

/** The window the finishing estimate reads the rate of contacts done over. */
const ESTIMATE_WINDOW_MS = 10 * 60_000;

const NOT_FOUND = { code: "campaign_not_found", message: "No campaign with this id" };

/**
 * Campaigns: stored with their contacts, listed, read, paused, resumed and cancelled. A new
 * campaign is `scheduled`; the CampaignRunner starts and dials it.
 */
export class CampaignsService {
  private readonly campaigns: CampaignsRepository;
  private readonly contacts: CampaignContactsRepository;
  private readonly agents: AgentsRepository;
  private readonly numbers: PhoneNumbersRepository;
  private readonly calls: CallsRepository;
  private readonly changeListeners: Array<(campaignId: string) => void> = [];

  constructor(
    private readonly db: Db,
    private readonly deps: { accounts: AccountsService; cursors: CursorCodec; events: CampaignEvents },
  ) {
    this.campaigns = new CampaignsRepository(db);
    this.contacts = new CampaignContactsRepository(db);
    this.agents = new AgentsRepository(db);
    this.numbers = new PhoneNumbersRepository(db);
    this.calls = new CallsRepository(db);
  }

  async create(account: AccountRecord, input: CreateCampaignInput): Promise<CampaignView> {
    const agent = await this.agents.findById(input.agent_id);
    // Another account's agent is as unknown as a missing one: its existence is not revealed.
    if (!agent || agent.account_id !== account.id) {
      throw new ApiError(404, "agent_not_found", `agent_id: no agent '${input.agent_id}'`, { fields: [{ field: "agent_id", message: "no such agent" }] });
    }
    if (agent.status !== "active") {
      throw new ApiError(409, "agent_inactive", `Agent '${agent.id}' is inactive; set its status to active first`);
    }
    const settings = input.settings ?? {};
    const concurrentLimit = this.deps.accounts.limitsOf(account).concurrentCalls;
    const maxConcurrent = settings.max_concurrent ?? Math.max(1, Math.min(CAMPAIGN_LIMITS.defaultMaxConcurrent, concurrentLimit));
    if (maxConcurrent > concurrentLimit) {
      throw ApiError.field("invalid_request", "settings.max_concurrent", `must be at most ${concurrentLimit}, the account's concurrent-call limit`);
    }
    if (settings.from_number !== undefined && !(await this.numbers.findActive(account.id, settings.from_number))) {
      throw ApiError.field("invalid_from_number", "settings.from_number", `${settings.from_number} is not an active number of this account; GET /v1/phone-numbers lists them`);
    }
    const timezone = settings.timezone ?? null;
    const hours = settings.calling_hours ?? DEFAULT_CALLING_HOURS;
    // A country's zones are checked once, not per contact: ten thousand numbers of one country
    // with the window shut everywhere took 19 s of time-zone arithmetic.
    const opens = new Map<string, boolean>();
    const zones = input.contacts.map((contact, i) => this.zoneOf(contact.phone, contact.timezone ?? null, timezone, hours, i, opens));

    const at = nowIso();
    const campaign: CampaignRecord = {
      id: newId("campaign"),
      account_id: account.id,
      name: input.name.trim(),
      agent_id: agent.id,
      status: "scheduled",
      max_concurrent: maxConcurrent,
      retry_no_answer: settings.retry_no_answer ?? false,
      schedule: settings.schedule ?? null,
      contact_count: input.contacts.length,
      from_number: settings.from_number ?? null,
      max_attempts: settings.max_attempts ?? CAMPAIGN_LIMITS.defaultMaxAttempts,
      retry_delay_minutes: settings.retry_delay_minutes ?? CAMPAIGN_LIMITS.defaultRetryDelayMinutes,
      calling_hours: settings.calling_hours ?? null,
      timezone,
      paused_reason: null,
      started_at: null,
      finished_at: null,
      created_at: at,
      updated_at: at,
    };
    const contacts: ContactRecord[] = input.contacts.map((contact, position) => ({
      id: newId("contact"),
      campaign_id: campaign.id,
      position,
      phone: contact.phone,
      context: contact.context ?? {},
      status: "pending",
      call_id: null,
      attempts: 0,
      timezone: contact.timezone ?? null,
      zone: zones[position]!,
      next_attempt_at: null,
      failures: 0,
      reason: null,
      updated_at: at,
    }));
    await this.db.transaction().execute(async (trx) => {
      await this.campaigns.insert(campaign, trx);
      await this.contacts.insertMany(contacts, trx);
    });
    this.notifyChanged(campaign.id);
    return { ...campaign, counts: { ...emptyContactCounts(), total: contacts.length, pending: contacts.length }, attempts: 0, estimated_finish_at: null };
  }

  /**
   * The zone key contact `index` is called in (see calling-hours.ts), or a 400 naming what to
   * give: no zone is known for its number, or the hours never hold in every zone of its
   * country at once (the strict rule when neither the contact nor the campaign names a zone;
   * `opens` keeps each country's answer for the other contacts).
   */
  private zoneOf(phone: string, own: string | null, campaignZone: string | null, hours: CallingHours, index: number, opens: Map<string, boolean>): string {
    const zone = contactZone(phone, own, campaignZone);
    if (zone === null) {
      throw ApiError.field("invalid_request", `contacts[${index}].timezone`, `no time zone is known for ${phone}; give the contact's timezone or settings.timezone`);
    }
    if (zone.startsWith("country:") && !opens.has(zone)) opens.set(zone, nextOpening(hours, zone, Date.now()) !== null);
    if (opens.get(zone) === false) {
      throw ApiError.field(
        "invalid_request",
        `contacts[${index}].timezone`,
        `${phone} is in a country with several time zones and the calling hours never hold in all of them at once; give the contact's timezone or settings.timezone`,
      );
    }
    return zone;
  }

  /** Called with the id of a campaign created, resumed or cancelled: the runner looks at it. */
  onChanged(listener: (campaignId: string) => void): void {
    this.changeListeners.push(listener);
  }

  private notifyChanged(campaignId: string): void {
    for (const listener of this.changeListeners) listener(campaignId);
  }

  async get(accountId: string, id: string): Promise<CampaignView> {
    const campaign = findOwned(await this.campaigns.findById(id), accountId, NOT_FOUND);
    const counts = await this.contacts.counts([campaign.id]);
    return this.view(campaign, counts.get(campaign.id)!);
  }

  /**
   * Adds progress: attempts made and, for a running campaign, when it should finish: the
   * contacts still open over the rate at which contacts reached a final status in the last
   * ten minutes (or since the start, if later).
   */
  private async view(campaign: CampaignRecord, counts: ContactCounts): Promise<CampaignView> {
    const attempts = await this.contacts.attemptsMade(campaign.id);
    let estimated: string | null = null;
    if (campaign.status === "running" && campaign.started_at) {
      const now = Date.now();
      const since = Math.max(now - ESTIMATE_WINDOW_MS, Date.parse(campaign.started_at));
      const done = await this.contacts.finishedSince(campaign.id, new Date(since).toISOString());
      const open = counts.pending + counts.calling;
      if (done > 0 && now > since) estimated = new Date(now + (open * (now - since)) / done).toISOString();
    }
    return { ...campaign, counts, attempts, estimated_finish_at: estimated };
  }

  /** The contacts of a campaign already read with `get`, in calling order. */
  contactsOf(campaign: CampaignView): Promise<ContactRecord[]> {
    return this.contacts.list(campaign.id);
  }

  /**
   * One page of a campaign's contacts in calling order (optionally of one status), each with
   * the calls made for it, oldest first. The cursor holds the contact's position.
   */
  async listContacts(accountId: string, id: string, status: ContactStatus | undefined, query: ListQuery) {
    const campaign = findOwned(await this.campaigns.findById(id), accountId, NOT_FOUND);
    const page = await listPage({
      codec: this.deps.cursors,
      list: "campaign_contacts",
      filters: { campaign: campaign.id, status },
      query,
      fetch: async (request) => {
        const after = request.after ? Number(request.after.createdAt) : request.order === "asc" ? -1 : Number.MAX_SAFE_INTEGER;
        const rows = await this.contacts.page(campaign.id, status, after, request.limit + 1, request.order);
        // The keyset is the position, carried in the cursor's time field.
        return { rows: rows.slice(0, request.limit).map((row) => ({ ...row, created_at: String(row.position) })), hasMore: rows.length > request.limit };
      },
      count: () => this.contacts.countOf(campaign.id, status),
      present: ({ created_at: _position, ...contact }: ContactRecord & { created_at: string }): ContactRecord => contact,
    });
    const calls = await this.calls.ofContacts(page.data.map((c) => c.id));
    return { ...page, data: page.data.map((contact) => ({ contact, calls: calls.filter((call) => call.contact_id === contact.id) })) };
  }

  /** `results.csv`: see campaignResultsCsv; the extracted-data columns only for a reader that may read calls' content. */
  async resultsCsv(accountId: string, id: string, options: { extractedData: boolean }): Promise<string> {
    const campaign = findOwned(await this.campaigns.findById(id), accountId, NOT_FOUND);
    const contacts = await this.contacts.list(campaign.id);
    const lastCalls = new Map<string, CallRecord>();
    for (const call of await this.calls.ofContacts(contacts.map((c) => c.id))) lastCalls.set(call.id, call);
    return campaignResultsCsv(contacts, lastCalls, options.extractedData);
  }

  async list(accountId: string, filters: CampaignFilters, query: ListQuery) {
    const page = await listPage({
      codec: this.deps.cursors,
      list: "campaigns",
      filters: { ...filters },
      query,
      fetch: (p) => this.campaigns.page(accountId, filters, p),
      count: () => this.campaigns.count(accountId, filters),
      present: (row: CampaignRecord) => row,
    });
    const counts = await this.contacts.counts(page.data.map((c) => c.id));
    const data: CampaignView[] = [];
    for (const campaign of page.data) data.push(await this.view(campaign, counts.get(campaign.id)!));
    return { ...page, data };
  }

  /**
   * Pauses, resumes or cancels. Pausing lets the campaign's calls under way finish and starts
   * no more; resuming makes it `scheduled` again (the runner starts it at once, or at its
   * start time if that is still ahead); cancelling also cancels the contacts not yet dialled
   * or waiting for a retry. A request the current status does not allow is 409
   * `invalid_campaign_state`.
   */
  async apply(accountId: string, id: string, action: CampaignAction): Promise<CampaignView> {
    const current = findOwned(await this.campaigns.findById(id), accountId, NOT_FOUND);
    const { from, to, change } = TRANSITIONS[action];
    const at = nextUpdatedAt(current.updated_at);
    await this.db.transaction().execute(async (trx) => {
      // The status check and the move are one statement, so a concurrent change cannot slip between them.
      const finished = to === "cancelled" ? { finished_at: at } : {};
      if (!(await this.campaigns.transition(id, from, to, at, trx, { ...change, ...finished }))) {
        const status = (await this.campaigns.findById(id, trx))!.status;
        throw new ApiError(409, "invalid_campaign_state", `Cannot ${action} a campaign that is ${status}; ${action} applies to ${from.join(" or ")} campaigns`, {
          status,
        });
      }
      if (to === "cancelled") await this.contacts.cancelPending(id, at, trx);
      const event = EVENT_OF[action];
      if (event) await this.deps.events.record(event, (await this.campaigns.findById(id, trx))!, trx);
    });
    this.notifyChanged(id);
    return this.get(accountId, id);
  }
}

const EVENT_OF: Record<CampaignAction, "campaign.paused" | "campaign.cancelled" | null> = {
  pause: "campaign.paused",
  resume: null,
  cancel: "campaign.cancelled",
};
