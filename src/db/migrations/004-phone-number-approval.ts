import { sql, type Kysely } from "kysely";

/**
 * Numbers registered through the API wait for the operator's approval (`pending`), since an
 * unverified number opens toll fraud, caller-ID spoofing and inbound hijack. `approved_at`
 * records the approval: a client may bring back a released number only if it was approved for
 * its account. Rows keep their status; numbers active before this version count as approved
 * when they were registered (released ones were never checked, so they count as unapproved).
 *
 * Uniqueness changes with it: only one account may hold a number `active`, while several may
 * have a pending claim (a claim must not block the real owner); an account has at most one live
 * (active or pending) row per number.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("phone_numbers").addColumn("approved_at", "text").execute();
  await sql`UPDATE phone_numbers SET approved_at = created_at WHERE status = 'active'`.execute(db);
  await sql`DROP INDEX phone_numbers_held`.execute(db);
  await sql`CREATE UNIQUE INDEX phone_numbers_active ON phone_numbers (phone_number) WHERE status = 'active'`.execute(db);
  await sql`CREATE UNIQUE INDEX phone_numbers_account_live ON phone_numbers (account_id, phone_number) WHERE status <> 'inactive'`.execute(db);
}
