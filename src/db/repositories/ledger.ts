import { sql } from "kysely";
import type { Db } from "../database.js";
import type { LedgerTable } from "../schema.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

export type LedgerRecord = LedgerTable;

export const LEDGER_REASONS = ["grant", "call", "adjustment"] as const;
export type LedgerReason = (typeof LEDGER_REASONS)[number];

export class LedgerRepository {
  constructor(private readonly db: Db) {}

  /**
   * Moves the balance and writes the ledger line in one transaction, so the balance is
   * always the sum of the ledger. Returns the balance after the movement.
   */
  async record(entry: Omit<LedgerRecord, "balance_after">, db: Db = this.db): Promise<number> {
    const run = async (trx: Db) => {
      const updated = await trx
        .updateTable("accounts")
        .set({ credit_balance: sql`credit_balance + ${entry.amount}`, updated_at: entry.created_at })
        .where("id", "=", entry.account_id)
        .returning("credit_balance")
        .executeTakeFirstOrThrow();
      await trx.insertInto("ledger").values({ ...entry, balance_after: updated.credit_balance }).execute();
      return updated.credit_balance;
    };
    return db.isTransaction ? run(db) : db.transaction().execute(run);
  }

  page(accountId: string, page: PageRequest): Promise<Page<LedgerRecord>> {
    return fetchPage(this.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId), "ledger", page);
  }

  async count(accountId: string): Promise<number> {
    const row = await this.db.selectFrom("ledger").select((eb) => eb.fn.countAll().as("n")).where("account_id", "=", accountId).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
