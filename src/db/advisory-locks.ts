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
 * Holds `lock` until `trx` ends, waiting for any other transaction that holds it. Only inside a
 * transaction (a lock taken outside one would end with its statement); a no-op on SQLite.
 */
export async function holdAdvisoryLock(trx: Db, lock: (typeof ADVISORY_LOCKS)[keyof typeof ADVISORY_LOCKS]): Promise<void> {
  if (!isPostgres(trx)) return;
  if (!trx.isTransaction) throw new Error("an advisory lock is held by a transaction: call holdAdvisoryLock inside one");
  await sql`SELECT pg_advisory_xact_lock(${lock})`.execute(trx);
}
