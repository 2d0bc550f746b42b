import { sql } from "kysely";
import type { Db } from "../database.js";
import type { WebhookTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

export const WEBHOOK_STATUSES = ["active", "inactive", "failing"] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export interface WebhookRecord extends Omit<WebhookTable, "events" | "metadata" | "status"> {
  events: string[];
  metadata: Record<string, unknown>;
  status: WebhookStatus;
}

export interface WebhookFilters {
  status?: WebhookStatus | undefined;
}

function toRecord(row: WebhookTable): WebhookRecord {
  return {
    ...row,
    events: parseJson<string[]>(row.events) ?? [],
    metadata: parseJson<Record<string, unknown>>(row.metadata) ?? {},
    status: row.status as WebhookStatus,
  };
}

function toRow(record: Partial<WebhookRecord>): Partial<WebhookTable> {
  const { events, metadata, ...rest } = record;
  return {
    ...rest,
    ...(events !== undefined ? { events: toJson(events) } : {}),
    ...(metadata !== undefined ? { metadata: toJson(metadata) } : {}),
  };
}

/** Webhook subscriptions; deletion is permanent. */
export class WebhooksRepository {
  constructor(private readonly db: Db) {}

  async insert(record: WebhookRecord, db: Db = this.db): Promise<void> {
    await db.insertInto("webhooks").values(toRow(record) as WebhookTable).execute();
  }

  /** A webhook whatever its account: callers check ownership. */
  async findById(id: string): Promise<WebhookRecord | undefined> {
    const row = await this.db.selectFrom("webhooks").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The account's webhooks that receive events (every status but `inactive`). */
  async receiving(accountId: string, db: Db = this.db): Promise<WebhookRecord[]> {
    const rows = await db.selectFrom("webhooks").selectAll().where("account_id", "=", accountId).where("status", "<>", "inactive").execute();
    return rows.map(toRecord);
  }

  private filtered(accountId: string, filters: WebhookFilters, db: Db = this.db) {
    let q = db.selectFrom("webhooks").where("account_id", "=", accountId);
    if (filters.status) q = q.where("status", "=", filters.status);
    return q;
  }

  async page(accountId: string, filters: WebhookFilters, page: PageRequest): Promise<Page<WebhookRecord>> {
    const result = await fetchPage(this.filtered(accountId, filters).selectAll(), "webhooks", page);
    return { rows: result.rows.map(toRecord), hasMore: result.hasMore };
  }

  /** The account's webhooks matching `filters` (all of them, whatever their status, without). */
  async count(accountId: string, filters: WebhookFilters, db: Db = this.db): Promise<number> {
    const row = await this.filtered(accountId, filters, db).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(id: string, patch: Partial<WebhookRecord>, db: Db = this.db): Promise<void> {
    await db.updateTable("webhooks").set(toRow(patch)).where("id", "=", id).execute();
  }

  /**
   * Counts a failed delivery attempt: `failing`, or `inactive` once `disableAfter` attempts in
   * a row have failed or when `disableNow` (a 410 Gone). An inactive webhook stays inactive.
   * Returns the status after, or undefined when the webhook is gone.
   */
  async recordFailure(id: string, disableNow: boolean, disableAfter: number, at: string, db: Db): Promise<WebhookStatus | undefined> {
    const next = sql<string>`CASE WHEN status = 'inactive' OR ${disableNow ? 1 : 0} = 1 OR consecutive_failures + 1 >= ${disableAfter} THEN 'inactive' ELSE 'failing' END`;
    const row = await db
      .updateTable("webhooks")
      .set({ consecutive_failures: sql`consecutive_failures + 1`, status: next, updated_at: sql`CASE WHEN status = ${next} THEN updated_at ELSE ${at} END` })
      .where("id", "=", id)
      .returning("status")
      .executeTakeFirst();
    return row?.status as WebhookStatus | undefined;
  }

  /** Counts a delivered attempt: the failure count starts again and a failing webhook is active. */
  async recordSuccess(id: string, at: string, db: Db): Promise<void> {
    await db
      .updateTable("webhooks")
      .set({
        consecutive_failures: 0,
        status: sql`CASE WHEN status = 'failing' THEN 'active' ELSE status END`,
        updated_at: sql`CASE WHEN status = 'failing' THEN ${at} ELSE updated_at END`,
      })
      .where("id", "=", id)
      .execute();
  }

  async delete(id: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom("webhooks").where("id", "=", id).execute();
  }
}
