import type { ApiError } from "../core/api-error.js";
import type { Db } from "../db/database.js";
import { holdAccountLock } from "../db/advisory-locks.js";

/** A plan limit on how many rows of a kind an account may have. */
export interface RowLimit {
  limit: number;
  /** The account whose rows are counted: on PostgreSQL its lock serialises the count and the insert (see insertWithinLimit). */
  accountId: string;
  /** Counts the rows the limit applies to, inside the insert's transaction. */
  count: (trx: Db) => Promise<number>;
  /** The error for an account already at its limit. */
  refusal: () => ApiError;
}

/**
 * Runs `insert` unless the account is at the limit. The count and the insert share one
 * transaction, and on PostgreSQL that transaction first takes the account's lock: there
 * (READ COMMITTED, several connections and nodes) a shared transaction alone would let two
 * requests both count the last free slot and both insert. SQLite has one writer at a time.
 */
export async function insertWithinLimit(db: Db, rule: RowLimit, insert: (trx: Db) => Promise<void>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await holdAccountLock(trx, rule.accountId);
    if ((await rule.count(trx)) >= rule.limit) throw rule.refusal();
    await insert(trx);
  });
}
