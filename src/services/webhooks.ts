import { randomBytes } from "node:crypto";
import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { DeliveriesRepository } from "../db/repositories/deliveries.js";
import { WebhooksRepository, type WebhookFilters, type WebhookRecord } from "../db/repositories/webhooks.js";
import type { AccountsService } from "./accounts.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { insertWithinLimit, type RowLimit } from "./limited-insert.js";
import { findOwned } from "./ownership.js";
import type { WebhookTargets } from "./webhook-targets.js";

/** What a webhook is created with (POST /v1/webhooks, validated). */
export interface CreateWebhookInput {
  url: string;
  events: string[];
  secret?: string;
  description?: string | null;
  metadata?: Record<string, unknown>;
}

/** What a webhook update may change (PATCH /v1/webhooks/{id}). */
export interface UpdateWebhookInput extends Partial<CreateWebhookInput> {
  status?: "active" | "inactive";
}

const NOT_FOUND = { code: "webhook_not_found", message: "No webhook with this id" };

/** A signing secret for a webhook created without one. */
function generateWebhookSecret(): string {
  return "whsec_" + randomBytes(24).toString("hex");
}

/**
 * Webhook subscriptions: stored, listed, updated and deleted here. Sending events to them
 * is the delivery worker's job (`webhook-delivery.ts`); nothing here sends anything but the
 * reachability probe's connection.
 */
export class WebhooksService {
  private readonly webhooks: WebhooksRepository;
  private readonly deliveries: DeliveriesRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { accounts: AccountsService; cursors: CursorCodec; targets: WebhookTargets },
  ) {
    this.webhooks = new WebhooksRepository(db);
    this.deliveries = new DeliveriesRepository(db);
  }

  async create(account: AccountRecord, input: CreateWebhookInput): Promise<WebhookRecord> {
    // Refuse at the limit before waiting on the network; the transaction below decides for good.
    const webhookLimit = this.limitOf(account);
    if ((await webhookLimit.count(this.db)) >= webhookLimit.limit) throw webhookLimit.refusal();
    await this.deps.targets.checkForStorage(account.id, input.url, { field: "url", probe: true });
    const at = nowIso();
    const webhook: WebhookRecord = {
      id: newId("webhook"),
      account_id: account.id,
      url: input.url,
      events: input.events,
      secret: input.secret ?? generateWebhookSecret(),
      description: input.description ?? null,
      status: "active",
      metadata: input.metadata ?? {},
      consecutive_failures: 0,
      created_at: at,
      updated_at: at,
    };
    // Count and insert in one transaction so two concurrent creates cannot both pass the limit.
    await insertWithinLimit(this.db, webhookLimit, (trx) => this.webhooks.insert(webhook, trx));
    return webhook;
  }

  async get(accountId: string, id: string): Promise<WebhookRecord> {
    return findOwned(await this.webhooks.findById(id), accountId, NOT_FOUND);
  }

  list(accountId: string, filters: WebhookFilters, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "webhooks",
      filters: { ...filters },
      query,
      fetch: (page) => this.webhooks.page(accountId, filters, page),
      count: () => this.webhooks.count(accountId, filters),
      present: (row: WebhookRecord) => row,
    });
  }

  async update(accountId: string, id: string, input: UpdateWebhookInput): Promise<WebhookRecord> {
    const current = await this.get(accountId, id);
    const patch: Partial<WebhookRecord> = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    if (input.url !== undefined) await this.deps.targets.checkForStorage(accountId, input.url, { field: "url", probe: input.url !== current.url });
    // Re-enabling starts the count towards automatic disabling afresh.
    if (input.status === "active") patch.consecutive_failures = 0;
    patch.updated_at = nextUpdatedAt(current.updated_at);
    await this.db.transaction().execute(async (trx) => {
      await this.webhooks.update(id, patch, trx);
      // Disabled: what was waiting for it is not sent (re-enabling does not bring it back).
      if (input.status === "inactive") await this.deliveries.skipPending(id, patch.updated_at!, trx);
    });
    return { ...current, ...patch };
  }

  /** Deletes the webhook with its deliveries and their log: events stop at once. */
  async delete(accountId: string, id: string): Promise<void> {
    await this.get(accountId, id);
    await this.db.transaction().execute(async (trx) => {
      await this.deliveries.deleteOfWebhook(id, trx);
      await this.webhooks.delete(id, trx);
    });
  }

  private limitOf(account: AccountRecord): RowLimit {
    const limit = this.deps.accounts.limitsOf(account).webhooks;
    return {
      limit,
      accountId: account.id,
      count: (db: Db) => this.webhooks.count(account.id, {}, db),
      refusal: () => new ApiError(402, "webhook_limit_reached", `The ${account.plan} plan allows ${limit} webhooks; delete one or upgrade`),
    };
  }
}
