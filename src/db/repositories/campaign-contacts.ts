import type { Db } from "../database.js";
import type { CampaignContactTable } from "../schema.js";
import { literalLimit } from "../literal-limit.js";
import { parseJson, toJson } from "./json-column.js";

/**
 * `pending` until dialled (and again while a retry waits, `next_attempt_at` set), `calling`
 * while its call is queued or live, then final: `completed` (answered), `no_answer`, `busy`,
 * `failed` (out of retries), `do_not_call` (the callee asked not to be called again),
 * `skipped` (not dialled: `reason` says why, e.g. `do_not_call` for a listed number) or
 * `cancelled` with its campaign.
 */
export const CONTACT_STATUSES = ["pending", "calling", "completed", "no_answer", "busy", "failed", "skipped", "cancelled", "do_not_call"] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];
/** Statuses a contact no longer leaves. */
export const FINAL_CONTACT_STATUSES = ["completed", "no_answer", "busy", "failed", "skipped", "cancelled", "do_not_call"] as const satisfies readonly ContactStatus[];

export interface ContactRecord extends Omit<CampaignContactTable, "context" | "status"> {
  context: Record<string, unknown>;
  status: ContactStatus;
}

/** How many of a campaign's contacts are in each status, and in all. */
export type ContactCounts = Record<ContactStatus, number> & { total: number };

export function emptyContactCounts(): ContactCounts {
  const counts = { total: 0 } as ContactCounts;
  for (const status of CONTACT_STATUSES) counts[status] = 0;
  return counts;
}

function toRecord(row: CampaignContactTable): ContactRecord {
  return { ...row, context: parseJson<Record<string, unknown>>(row.context) ?? {}, status: row.status as ContactStatus };
}

/** Rows per INSERT: 14 columns each stays far below SQLite's limit on bound parameters. */
const INSERT_BATCH = 400;

export class CampaignContactsRepository {
  constructor(private readonly db: Db) {}

  async insertMany(records: ContactRecord[], db: Db = this.db): Promise<void> {
    for (let i = 0; i < records.length; i += INSERT_BATCH) {
      const rows = records.slice(i, i + INSERT_BATCH).map((r) => ({ ...r, context: toJson(r.context) }));
      await db.insertInto("campaign_contacts").values(rows).execute();
    }
  }

  /** A campaign's contacts in their original order. */
  async list(campaignId: string): Promise<ContactRecord[]> {
    const rows = await this.db.selectFrom("campaign_contacts").selectAll().where("campaign_id", "=", campaignId).orderBy("position").execute();
    return rows.map(toRecord);
  }

  /** Contacts of the campaigns in `campaignStatuses`, counted by contact status (every status present). */
  async countByStatus(campaignStatuses: readonly string[]): Promise<Record<ContactStatus, number>> {
    const counts = Object.fromEntries(CONTACT_STATUSES.map((s) => [s, 0])) as Record<ContactStatus, number>;
    const rows = await this.db
      .selectFrom("campaign_contacts as cc")
      .innerJoin("campaigns as c", "c.id", "cc.campaign_id")
      .select((eb) => ["cc.status", eb.fn.countAll<number>().as("n")])
      .where("c.status", "in", campaignStatuses)
      .groupBy("cc.status")
      .execute();
    for (const row of rows) counts[row.status as ContactStatus] += Number(row.n);
    return counts;
  }

  /** Status counts for each of the given campaigns (every id present in the result). */
  async counts(campaignIds: readonly string[]): Promise<Map<string, ContactCounts>> {
    const result = new Map(campaignIds.map((id) => [id, emptyContactCounts()]));
    if (campaignIds.length === 0) return result;
    const rows = await this.db
      .selectFrom("campaign_contacts")
      .select((eb) => ["campaign_id", "status", eb.fn.countAll<number>().as("n")])
      .where("campaign_id", "in", campaignIds)
      .groupBy(["campaign_id", "status"])
      .execute();
    for (const row of rows) {
      const counts = result.get(row.campaign_id)!;
      counts[row.status as ContactStatus] += Number(row.n);
      counts.total += Number(row.n);
    }
    return result;
  }

  /** Marks the campaign's contacts that were never dialled, or wait for a retry, `cancelled`. */
  async cancelPending(campaignId: string, at: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable("campaign_contacts")
      .set({ status: "cancelled", next_attempt_at: null, updated_at: at })
      .where("campaign_id", "=", campaignId)
      .where("status", "=", "pending")
      .execute();
  }

  async findById(id: string, db: Db = this.db): Promise<ContactRecord | undefined> {
    const row = await db.selectFrom("campaign_contacts").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** One page of a campaign's contacts in calling order, after position `after`, optionally of one status. */
  async page(campaignId: string, status: ContactStatus | undefined, after: number, limit: number, order: "asc" | "desc"): Promise<ContactRecord[]> {
    let q = this.db.selectFrom("campaign_contacts").selectAll().where("campaign_id", "=", campaignId);
    if (status) q = q.where("status", "=", status);
    q = q.where("position", order === "asc" ? ">" : "<", after);
    const rows = await q.orderBy("position", order).limit(literalLimit(limit)).execute();
    return rows.map(toRecord);
  }

  async countOf(campaignId: string, status: ContactStatus | undefined): Promise<number> {
    let q = this.db.selectFrom("campaign_contacts").where("campaign_id", "=", campaignId);
    if (status) q = q.where("status", "=", status);
    const row = await q.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The zone keys of the campaign's contacts still to be dialled (null: not resolved yet). */
  async waitingZones(campaignId: string): Promise<Array<string | null>> {
    const rows = await this.db.selectFrom("campaign_contacts").select("zone").distinct().where("campaign_id", "=", campaignId).where("status", "=", "pending").execute();
    return rows.map((r) => r.zone);
  }

  /** Pending contacts without a zone key (stored before the runner existed). */
  async unzoned(campaignId: string): Promise<ContactRecord[]> {
    const rows = await this.db.selectFrom("campaign_contacts").selectAll().where("campaign_id", "=", campaignId).where("status", "=", "pending").where("zone", "is", null).execute();
    return rows.map(toRecord);
  }

  async setZone(id: string, zone: string): Promise<void> {
    await this.db.updateTable("campaign_contacts").set({ zone }).where("id", "=", id).execute();
  }

  /** Up to `limit` contacts that may be dialled at `nowMs` in the open zones, in calling order. */
  async due(campaignId: string, openZones: readonly string[], nowMs: number, limit: number): Promise<ContactRecord[]> {
    if (openZones.length === 0 || limit <= 0) return [];
    const rows = await this.db
      .selectFrom("campaign_contacts")
      .selectAll()
      .where("campaign_id", "=", campaignId)
      .where("status", "=", "pending")
      .where("zone", "in", openZones)
      .where((eb) => eb.or([eb("next_attempt_at", "is", null), eb("next_attempt_at", "<=", nowMs)]))
      .orderBy("position")
      .limit(literalLimit(limit))
      .execute();
    return rows.map(toRecord);
  }

  /** Calls made for the campaign's contacts, in all. */
  async attemptsMade(campaignId: string): Promise<number> {
    const row = await this.db.selectFrom("campaign_contacts").select((eb) => eb.fn.sum<number>("attempts").as("n")).where("campaign_id", "=", campaignId).executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Contacts of the campaign that reached a final status at or after `since` (ISO). */
  async finishedSince(campaignId: string, since: string): Promise<number> {
    const row = await this.db
      .selectFrom("campaign_contacts")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("campaign_id", "=", campaignId)
      .where("status", "in", FINAL_CONTACT_STATUSES)
      .where("updated_at", ">=", since)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The earliest retry still waiting (ms), or null. */
  async nextRetryAt(campaignId: string): Promise<number | null> {
    const row = await this.db
      .selectFrom("campaign_contacts")
      .select((eb) => eb.fn.min("next_attempt_at").as("at"))
      .where("campaign_id", "=", campaignId)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return row?.at == null ? null : Number(row.at);
  }

  /** Whether any contact of the campaign is still pending or calling. */
  async hasOpen(campaignId: string, db: Db = this.db): Promise<boolean> {
    const row = await db.selectFrom("campaign_contacts").select("id").where("campaign_id", "=", campaignId).where("status", "in", ["pending", "calling"]).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Claims a pending contact for call `callId`: `calling`, one more attempt. False when it is
   * no longer pending (cancelled, or claimed by someone else): the status check and the move
   * are one statement.
   */
  async claim(id: string, callId: string, at: string, db: Db): Promise<boolean> {
    const result = await db
      .updateTable("campaign_contacts")
      .set((eb) => ({ status: "calling", call_id: callId, attempts: eb("attempts", "+", 1), next_attempt_at: null, updated_at: at }))
      .where("id", "=", id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Moves a contact from `from` with the given changes; false when it was not in `from`. */
  async move(id: string, from: ContactStatus, patch: Partial<Pick<CampaignContactTable, "status" | "attempts" | "next_attempt_at" | "failures" | "reason">>, at: string, db: Db): Promise<boolean> {
    const result = await db
      .updateTable("campaign_contacts")
      .set({ ...patch, updated_at: at })
      .where("id", "=", id)
      .where("status", "=", from)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
