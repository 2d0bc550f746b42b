import { sql, type Kysely } from "kysely";

/**
 * Retention (see RetentionJob): an account's own `retention_days` (NULL: the service's default,
 * PARLEY_RETENTION_DAYS; 0: keep forever whatever the default), and an index of the calls that
 * still hold content, by account and age, so the daily pass reads only what it may remove (a
 * call leaves the index once its content is gone). Its condition is CALL_CONTENT_CONDITION's.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("accounts").addColumn("retention_days", "integer").execute();
  await sql`CREATE INDEX calls_with_content ON calls (account_id, created_at, id)
    WHERE transcript IS NOT NULL OR recording_path IS NOT NULL OR analysis IS NOT NULL OR actions IS NOT NULL OR context <> '{}'`.execute(db);
}
