import type { Db } from "../database.js";
import type { CampaignTable } from "../schema.js";
import type { CallingHours } from "../../core/calling-hours.js";
import { parseJson, toJson } from "./json-column.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

/**
 * `scheduled` until its start time, then `running` (the runner dials it), ending `completed`
 * (every contact final) or `cancelled`; `paused` on request or by the runner (`paused_reason`).
 */
export const CAMPAIGN_STATUSES = ["scheduled", "running", "paused", "completed", "cancelled"] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export interface CampaignRecord extends Omit<CampaignTable, "retry_no_answer" | "status" | "calling_hours"> {
  status: CampaignStatus;
  retry_no_answer: boolean;
  /** Null: the default hours. */
  calling_hours: CallingHours | null;
}

/** What a status change may set besides the status. */
export type CampaignChange = Partial<Pick<CampaignTable, "paused_reason" | "started_at" | "finished_at">>;

export interface CampaignFilters {
  status?: CampaignStatus | undefined;
}

function toRecord(row: CampaignTable): CampaignRecord {
  return { ...row, status: row.status as CampaignStatus, retry_no_answer: row.retry_no_answer === 1, calling_hours: parseJson<CallingHours>(row.calling_hours) };
}

export class CampaignsRepository {
  constructor(private readonly db: Db) {}

  async insert(record: CampaignRecord, db: Db = this.db): Promise<void> {
    await db
      .insertInto("campaigns")
      .values({ ...record, retry_no_answer: record.retry_no_answer ? 1 : 0, calling_hours: record.calling_hours === null ? null : toJson(record.calling_hours) })
      .execute();
  }

  /** A campaign whatever its account: callers check ownership. */
  async findById(id: string, db: Db = this.db): Promise<CampaignRecord | undefined> {
    const row = await db.selectFrom("campaigns").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  private filtered(accountId: string, filters: CampaignFilters) {
    let q = this.db.selectFrom("campaigns").where("account_id", "=", accountId);
    if (filters.status) q = q.where("status", "=", filters.status);
    return q;
  }

  async page(accountId: string, filters: CampaignFilters, page: PageRequest): Promise<Page<CampaignRecord>> {
    const result = await fetchPage(this.filtered(accountId, filters).selectAll(), "campaigns", page);
    return { rows: result.rows.map(toRecord), hasMore: result.hasMore };
  }

  async count(accountId: string, filters: CampaignFilters): Promise<number> {
    const row = await this.filtered(accountId, filters).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Moves the campaign to `to` only if its status is one of `from`; says whether it moved. */
  async transition(id: string, from: readonly CampaignStatus[], to: CampaignStatus, at: string, db: Db = this.db, change: CampaignChange = {}): Promise<boolean> {
    const result = await db
      .updateTable("campaigns")
      .set({ ...change, status: to, updated_at: at })
      .where("id", "=", id)
      .where("status", "in", from)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Every campaign (of any account) in `status`, oldest first: the runner's work. */
  async allInStatus(status: CampaignStatus): Promise<CampaignRecord[]> {
    const rows = await this.db.selectFrom("campaigns").selectAll().where("status", "=", status).orderBy("created_at").orderBy("id").execute();
    return rows.map(toRecord);
  }
}
