import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { AgentsRepository } from "../db/repositories/agents.js";
import { CampaignContactsRepository, emptyContactCounts, type ContactCounts, type ContactRecord } from "../db/repositories/campaign-contacts.js";
import { CampaignsRepository, type CampaignFilters, type CampaignRecord, type CampaignStatus } from "../db/repositories/campaigns.js";
import type { CreateCampaignInput } from "../http/schemas/campaigns.js";
import type { AccountsService } from "./accounts.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { findOwned } from "./ownership.js";

export const CAMPAIGN_LIMITS = {
  name: 200,
  /** Contacts per campaign; also what `include=contacts` returns at most. */
  contacts: 10_000,
  maxConcurrent: 50,
  /** `max_concurrent` when not given (lowered to the account's concurrent-call limit). */
  defaultMaxConcurrent: 5,
} as const;

/** Which statuses each request moves a campaign from, and to. */
const TRANSITIONS = {
  pause: { from: ["scheduled", "running"], to: "paused" },
  resume: { from: ["paused"], to: "scheduled" },
  cancel: { from: ["scheduled", "running", "paused"], to: "cancelled" },
} as const satisfies Record<string, { from: readonly CampaignStatus[]; to: CampaignStatus }>;

export type CampaignAction = keyof typeof TRANSITIONS;

/** A campaign with its contacts' status counts. */
export interface CampaignView extends CampaignRecord {
  counts: ContactCounts;
}

const NOT_FOUND = { code: "campaign_not_found", message: "No campaign with this id" };

/**
 * Campaigns: stored with their contacts, listed, read, paused, resumed and cancelled. A new
 * campaign is `scheduled` and stays so until the campaign runner (a later issue) starts it:
 * nothing here dials.
 */
export class CampaignsService {
  private readonly campaigns: CampaignsRepository;
  private readonly contacts: CampaignContactsRepository;
  private readonly agents: AgentsRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { accounts: AccountsService; cursors: CursorCodec },
  ) {
    this.campaigns = new CampaignsRepository(db);
    this.contacts = new CampaignContactsRepository(db);
    this.agents = new AgentsRepository(db);
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
    const concurrentLimit = this.deps.accounts.limitsOf(account).concurrentCalls;
    const maxConcurrent = input.settings?.max_concurrent ?? Math.max(1, Math.min(CAMPAIGN_LIMITS.defaultMaxConcurrent, concurrentLimit));
    if (maxConcurrent > concurrentLimit) {
      throw ApiError.field("invalid_request", "settings.max_concurrent", `must be at most ${concurrentLimit}, the account's concurrent-call limit`);
    }

    const at = nowIso();
    const campaign: CampaignRecord = {
      id: newId("campaign"),
      account_id: account.id,
      name: input.name.trim(),
      agent_id: agent.id,
      status: "scheduled",
      max_concurrent: maxConcurrent,
      retry_no_answer: input.settings?.retry_no_answer ?? false,
      schedule: input.settings?.schedule ?? null,
      contact_count: input.contacts.length,
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
      updated_at: at,
    }));
    await this.db.transaction().execute(async (trx) => {
      await this.campaigns.insert(campaign, trx);
      await this.contacts.insertMany(contacts, trx);
    });
    return { ...campaign, counts: { ...emptyContactCounts(), total: contacts.length, pending: contacts.length } };
  }

  async get(accountId: string, id: string): Promise<CampaignView> {
    const campaign = findOwned(await this.campaigns.findById(id), accountId, NOT_FOUND);
    const counts = await this.contacts.counts([campaign.id]);
    return { ...campaign, counts: counts.get(campaign.id)! };
  }

  /** The contacts of a campaign already read with `get`, in calling order. */
  contactsOf(campaign: CampaignView): Promise<ContactRecord[]> {
    return this.contacts.list(campaign.id);
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
    return { ...page, data: page.data.map((c): CampaignView => ({ ...c, counts: counts.get(c.id)! })) };
  }

  /**
   * Pauses, resumes or cancels. Cancelling also cancels the contacts not yet dialled. A
   * request the current status does not allow is 409 `invalid_campaign_state`.
   */
  async apply(accountId: string, id: string, action: CampaignAction): Promise<CampaignView> {
    const current = findOwned(await this.campaigns.findById(id), accountId, NOT_FOUND);
    const { from, to } = TRANSITIONS[action];
    const at = nextUpdatedAt(current.updated_at);
    await this.db.transaction().execute(async (trx) => {
      // The status check and the move are one statement, so a concurrent change cannot slip between them.
      if (!(await this.campaigns.transition(id, from, to, at, trx))) {
        const status = (await this.campaigns.findById(id, trx))!.status;
        throw new ApiError(409, "invalid_campaign_state", `Cannot ${action} a campaign that is ${status}; ${action} applies to ${from.join(" or ")} campaigns`, {
          status,
        });
      }
      if (to === "cancelled") await this.contacts.cancelPending(id, at, trx);
    });
    return this.get(accountId, id);
  }
}
