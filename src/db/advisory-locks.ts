import { sql } from "kysely";
import type { Db } from "./database.js";
import { isPostgres } from "./dialect.js";

/**
 * PostgreSQL transaction-level advisory locks, by what they serialise. SQLite needs none: it
 * has one writer at a time, and every transaction here writes. Each key is an arbitrary
 * constant, unique in this table.
 */
export const ADVISORY_LOCKS = {
  /** Appending to the event outbox: sequence numbers are given in commit order (see EventsRepository.append). */
  eventSequence: 0x7061_726c_0001,
} as const;

/**
 * Key spaces of the two-key locks (`pg_advisory_xact_lock(space, hashtext(id))`), one per kind
 * of row locked by id. PostgreSQL keeps two-key locks apart from the one-key locks above. Two
 * ids may share a hash: then they wait for each other needlessly, never wrongly.
 */
const LOCK_SPACES = {
  /** What is counted against an account's limits: its rows, its calls and campaigns' slots. */
  account: 0x7061_0001,
} as const;

function requireTransaction(trx: Db): void {
  if (!trx.isTransaction) throw new Error("an advisory lock is held by a transaction: take it inside one");
}

/**
 * Holds `lock` until `trx` ends, waiting for any other transaction that holds it. Only inside a
 * transaction (a lock taken outside one would end with its statement); a no-op on SQLite.
 */
export async function holdAdvisoryLock(trx: Db, lock: (typeof ADVISORY_LOCKS)[keyof typeof ADVISORY_LOCKS]): Promise<void> {
  if (!isPostgres(trx)) return;
  requireTransaction(trx);
  await sql`SELECT pg_advisory_xact_lock(${lock})`.execute(trx);
}

/**
 * Holds the account's lock until `trx` ends: for "count, check the limit, then write" on the
 * account's rows, which READ COMMITTED lets two nodes (or two connections of one) do at once.
 * Take it first in the transaction, before any other lock, so two transactions never wait for
 * each other in opposite orders. A no-op on SQLite (one writer at a time).
 */
export async function holdAccountLock(trx: Db, accountId: string): Promise<void> {
  if (!isPostgres(trx)) return;
  requireTransaction(trx);
  await sql`SELECT pg_advisory_xact_lock(${LOCK_SPACES.account}::int4, hashtext(${accountId}))`.execute(trx);
}
