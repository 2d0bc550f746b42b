import type { Db } from "../database.js";
import type { DoNotCallTable } from "../schema.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

export const DO_NOT_CALL_SOURCES = ["api", "callee_request"] as const;
export type DoNotCallSource = (typeof DO_NOT_CALL_SOURCES)[number];

export interface DoNotCallRecord extends Omit<DoNotCallTable, "source"> {
  source: DoNotCallSource;
}

function toRecord(row: DoNotCallTable): DoNotCallRecord {
  return { ...row, source: row.source as DoNotCallSource };
}

/** An account's do-not-call list: one row per number. */
export class DoNotCallRepository {
  constructor(private readonly db: Db) {}

  /** Adds the number unless it is listed already; returns the entry as stored (the first one wins). */
  async add(record: DoNotCallRecord, db: Db = this.db): Promise<{ entry: DoNotCallRecord; added: boolean }> {
    const result = await db.insertInto("do_not_call").values(record).onConflict((oc) => oc.columns(["account_id", "phone_number"]).doNothing()).executeTakeFirst();
    const added = (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
    return { entry: added ? record : (await this.find(record.account_id, record.phone_number, db))!, added };
  }

  async find(accountId: string, phoneNumber: string, db: Db = this.db): Promise<DoNotCallRecord | undefined> {
    const row = await db.selectFrom("do_not_call").selectAll().where("account_id", "=", accountId).where("phone_number", "=", phoneNumber).executeTakeFirst();
    return row && toRecord(row);
  }

  /** Whether a number was listed on call `callId` (its callee asked then). */
  async listedOnCall(callId: string, db: Db = this.db): Promise<boolean> {
    return (await db.selectFrom("do_not_call").select("call_id").where("call_id", "=", callId).executeTakeFirst()) !== undefined;
  }

  /** Removes the number; false when it was not listed. */
  async remove(accountId: string, phoneNumber: string): Promise<boolean> {
    const result = await this.db.deleteFrom("do_not_call").where("account_id", "=", accountId).where("phone_number", "=", phoneNumber).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async page(accountId: string, page: PageRequest): Promise<Page<DoNotCallRecord>> {
    const result = await fetchPage(this.db.selectFrom("do_not_call").selectAll().where("account_id", "=", accountId), "do_not_call", page);
    return { rows: result.rows.map(toRecord), hasMore: result.hasMore };
  }

  async count(accountId: string): Promise<number> {
    const row = await this.db.selectFrom("do_not_call").where("account_id", "=", accountId).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
