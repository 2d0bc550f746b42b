import type { Db } from "../database.js";
import type { CampaignContactTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";

/** `pending` until dialled, `in_progress` while its call runs, then `completed` or `failed`; `cancelled` with its campaign. */
export const CONTACT_STATUSES = ["pending", "in_progress", "completed", "failed", "cancelled"] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

export interface ContactRecord extends Omit<CampaignContactTable, "context" | "status"> {
  context: Record<string, unknown>;
  status: ContactStatus;
}

/** How many of a campaign's contacts are in each status, and in all. */
export type ContactCounts = Record<ContactStatus, number> & { total: number };

export function emptyContactCounts(): ContactCounts {
  return { total: 0, pending: 0, in_progress: 0, completed: 0, failed: 0, cancelled: 0 };
}

function toRecord(row: CampaignContactTable): ContactRecord {
  return { ...row, context: parseJson<Record<string, unknown>>(row.context) ?? {}, status: row.status as ContactStatus };
}

/** Rows per INSERT: 9 columns each stays far below SQLite's limit on bound parameters. */
const INSERT_BATCH = 500;

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

  /** Marks the campaign's contacts that were never dialled `cancelled`. */
  async cancelPending(campaignId: string, at: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable("campaign_contacts")
      .set({ status: "cancelled", updated_at: at })
      .where("campaign_id", "=", campaignId)
      .where("status", "=", "pending")
      .execute();
  }
}
