import type { Plan, PlanLimits } from "../../config.js";
import type { Db } from "../database.js";
import type { AccountTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";

export interface AccountRecord extends Omit<AccountTable, "limit_overrides" | "plan"> {
  plan: Plan;
  limit_overrides: Partial<PlanLimits>;
}

export function accountFromRow(row: AccountTable): AccountRecord {
  return { ...row, plan: row.plan as Plan, limit_overrides: parseJson<Partial<PlanLimits>>(row.limit_overrides) ?? {} };
}

export class AccountsRepository {
  constructor(private readonly db: Db) {}

  async insert(record: AccountRecord): Promise<void> {
    await this.db.insertInto("accounts").values({ ...record, limit_overrides: toJson(record.limit_overrides) }).execute();
  }

  async findById(id: string, db: Db = this.db): Promise<AccountRecord | undefined> {
    const row = await db.selectFrom("accounts").selectAll().where("id", "=", id).executeTakeFirst();
    return row && accountFromRow(row);
  }

  async findByMediaTokenHash(hash: string): Promise<AccountRecord | undefined> {
    const row = await this.db.selectFrom("accounts").selectAll().where("media_token_hash", "=", hash).executeTakeFirst();
    return row && accountFromRow(row);
  }

  /** Replaces the account's media token (its hash): the previous one stops working at once. */
  async setMediaToken(id: string, hash: string, at: string): Promise<void> {
    await this.db.updateTable("accounts").set({ media_token_hash: hash, media_token_created_at: at, updated_at: at }).where("id", "=", id).execute();
  }

  async list(): Promise<AccountRecord[]> {
    const rows = await this.db.selectFrom("accounts").selectAll().orderBy("created_at").orderBy("id").execute();
    return rows.map(accountFromRow);
  }

  async update(id: string, patch: Partial<Pick<AccountRecord, "name" | "plan" | "limit_overrides" | "low_balance_threshold" | "retention_days">>, updatedAt: string): Promise<void> {
    const { limit_overrides, ...rest } = patch;
    await this.db
      .updateTable("accounts")
      .set({ ...rest, ...(limit_overrides ? { limit_overrides: toJson(limit_overrides) } : {}), updated_at: updatedAt })
      .where("id", "=", id)
      .execute();
  }
}
