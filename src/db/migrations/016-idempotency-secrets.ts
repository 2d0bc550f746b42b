import { sql, type Kysely } from "kysely";
import { rewriteStoredRows } from "./stored-rows.js";

/**
 * Idempotency-Key responses keep no secret in plain text (see middleware/idempotency.ts): a
 * route's secret fields are stored null in `response_body` and their values in
 * `sealed_secrets`, encrypted under a key derived from the caller's API key, which the
 * service does not keep. The responses earlier versions stored with a secret in them (a web
 * call token, a new webhook's signing secret) are deleted, their bytes zeroed in the file
 * (secure_delete, set here too, for a connection opened without it): a retry of one of those
 * sent before the upgrade runs again rather than replaying a secret to any key of the account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE idempotency_keys ADD COLUMN sealed_secrets TEXT`.execute(db);
  // The deleted rows' bytes are zeroed, not left in the pages' free space.
  await rewriteStoredRows(db, () => sql`PRAGMA secure_delete = ON`.execute(db));
  await sql`DELETE FROM idempotency_keys
    WHERE method = 'POST' AND path IN ('/v1/calls/web', '/v1/calls/web/', '/v1/webhooks', '/v1/webhooks/')
      AND status_code >= 200 AND status_code < 300`.execute(db);
}
