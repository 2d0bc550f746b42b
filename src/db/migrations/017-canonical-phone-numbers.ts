import { sql, type Kysely } from "kysely";
import { normalizePhoneNumber } from "../../core/phone-number.js";
import { rewriteStoredRows } from "./stored-rows.js";

/**
 * Every stored phone number in canonical form (core/phone-number.ts), as the API stores them
 * from this version: `+4407700900123` becomes `+447700900123`, so the do-not-call list, inbound
 * routing, the destination guard and the call list's filter compare old rows as they compare
 * new ones. A number that is no possible number (the API refuses those now) stays as it is.
 *
 * - do_not_call: entries of one account that become equal are merged into the oldest (its
 *   source and call are kept); the number stays listed.
 * - phone_numbers: where two rows become one number that the unique indexes allow once (one
 *   active holder per number, one live row per account and number), the active row wins over
 *   a pending one, then the oldest; the others are released (`inactive`, as a release leaves
 *   them), so no account loses a number without a row saying it held it.
 * - campaign contacts, calls (`phone_number`, `from_number`, `transfer_number`), campaigns'
 *   `from_number`, agents' `transfer_number`, appointments' `customer_phone`: rewritten in place.
 *
 * Each distinct number is read once; rows are rewritten only when their number changes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await rewriteStoredRows(db, () => canonicaliseAll(db));
}

async function canonicaliseAll(db: Kysely<unknown>): Promise<void> {
  const canonical = memo();
  await mergeDoNotCall(db, canonical);
  await canonicalisePhoneNumbers(db, canonical);
  for (const [table, column] of [
    ["campaign_contacts", "phone"],
    ["calls", "phone_number"],
    ["calls", "from_number"],
    ["calls", "transfer_number"],
    ["campaigns", "from_number"],
    ["agents", "transfer_number"],
    ["appointments", "customer_phone"],
  ] as const) {
    await rewrite(db, table, column, canonical);
  }
}

type Canonical = (number: string) => string;

/** The canonical form of a number, each distinct number read once (a big table repeats them). */
function memo(): Canonical {
  const seen = new Map<string, string>();
  return (number) => {
    let found = seen.get(number);
    if (found === undefined) seen.set(number, (found = normalizePhoneNumber(number) ?? number));
    return found;
  };
}

/** Rewrites `column` of `table` where its canonical form differs, by rowid (every such table has one). */
async function rewrite(db: Kysely<unknown>, table: string, column: string, canonical: Canonical): Promise<void> {
  const rows = await sql<{ rid: number; n: string }>`SELECT rowid AS rid, ${sql.ref(column)} AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} IS NOT NULL`.execute(db);
  for (const row of rows.rows) {
    const to = canonical(row.n);
    if (to !== row.n) await sql`UPDATE ${sql.table(table)} SET ${sql.ref(column)} = ${to} WHERE rowid = ${row.rid}`.execute(db);
  }
}

async function mergeDoNotCall(db: Kysely<unknown>, canonical: Canonical): Promise<void> {
  const rows = await sql<{ id: string; account_id: string; phone_number: string }>`
    SELECT id, account_id, phone_number FROM do_not_call ORDER BY created_at, id`.execute(db);
  const kept = new Set<string>();
  const changes: Array<{ id: string; to: string | null }> = [];
  for (const row of rows.rows) {
    const to = canonical(row.phone_number);
    const key = `${row.account_id} ${to}`;
    if (kept.has(key)) changes.push({ id: row.id, to: null });
    else {
      kept.add(key);
      if (to !== row.phone_number) changes.push({ id: row.id, to });
    }
  }
  // Merged entries go first, so no rewrite meets the (account_id, phone_number) key of a row still there.
  for (const { id } of changes.filter((c) => c.to === null)) await sql`DELETE FROM do_not_call WHERE id = ${id}`.execute(db);
  for (const { id, to } of changes) if (to !== null) await sql`UPDATE do_not_call SET phone_number = ${to} WHERE id = ${id}`.execute(db);
}

async function canonicalisePhoneNumbers(db: Kysely<unknown>, canonical: Canonical): Promise<void> {
  const rows = await sql<{ id: string; account_id: string; phone_number: string; status: string }>`
    SELECT id, account_id, phone_number, status FROM phone_numbers
    ORDER BY CASE status WHEN 'active' THEN 0 WHEN 'pending' THEN 1 ELSE 2 END, created_at, id`.execute(db);
  const activeHeld = new Set<string>();
  const live = new Set<string>();
  const released: Array<{ id: string; to: string }> = [];
  const renamed: Array<{ id: string; to: string }> = [];
  for (const row of rows.rows) {
    const to = canonical(row.phone_number);
    if (row.status !== "inactive") {
      const own = `${row.account_id} ${to}`;
      if (live.has(own) || (row.status === "active" && activeHeld.has(to))) {
        released.push({ id: row.id, to });
        continue;
      }
      live.add(own);
      if (row.status === "active") activeHeld.add(to);
    }
    if (to !== row.phone_number) renamed.push({ id: row.id, to });
  }
  const at = new Date().toISOString();
  // Released rows first: then no rename meets a unique index held by a row that loses.
  for (const { id, to } of released) await sql`UPDATE phone_numbers SET status = 'inactive', phone_number = ${to}, updated_at = ${at} WHERE id = ${id}`.execute(db);
  for (const { id, to } of renamed) await sql`UPDATE phone_numbers SET phone_number = ${to} WHERE id = ${id}`.execute(db);
}
