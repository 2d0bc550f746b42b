import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * The agent and call lists read from an index alone: each list's keyset, filters and item
 * columns are all in its index (a covering index), so a page reads no table row. A table row
 * holds an agent's prompt (up to 20,000 characters) or a call's transcript; a long one spills
 * onto overflow pages that SQLite reads to reach the columns after it, so a page cost more the
 * longer its agents' prompts or calls. The (account_id, created_at, id) indexes these begin
 * with go. Every query on agents by account skips deleted ones, hence the partial index (which
 * holds deleted_at too: SQLite takes an index as covering only when it holds every column
 * the query names).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    // PostgreSQL reads a page's few rows from the table by the keyset index (its pages hold
    // no long text: TOAST keeps prompts and transcripts apart), so the index is the keyset alone.
    await sql`CREATE INDEX agents_list ON agents (account_id, created_at, id) WHERE deleted_at IS NULL`.execute(db);
    await sql`CREATE INDEX calls_list ON calls (account_id, created_at, id)`.execute(db);
  } else {
    await sql`CREATE INDEX agents_list ON agents (account_id, created_at, id, status, name, voice_id, language, model, updated_at, deleted_at) WHERE deleted_at IS NULL`.execute(db);
    await sql`CREATE INDEX calls_list ON calls (account_id, created_at, id, status, outcome, direction, phone_number, from_number, agent_id, duration, metadata, ended_at)`.execute(db);
  }
  await sql`DROP INDEX agents_account_created`.execute(db);
  await sql`DROP INDEX calls_account_created`.execute(db);
}
