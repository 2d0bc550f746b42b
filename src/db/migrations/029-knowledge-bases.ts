import { sql, type Kysely } from "kysely";
import { isPostgres } from "../dialect.js";

/**
 * Knowledge bases (issue 31): documents an account uploads, cut into passages that its agents
 * answer callers from. A passage's words are indexed for full-text search:
 *
 * - SQLite: an FTS5 table over kb_passages' text (external content, so the text is stored
 *   once), kept in step by triggers: a passage inserted or deleted, by whatever statement, is
 *   in or out of the index in the same transaction. FTS5 addresses its rows by rowid, and
 *   VACUUM may renumber the rowids of a table without an INTEGER PRIMARY KEY: `seq` is that
 *   key, the passage's `id` a unique column beside it.
 * - PostgreSQL: a GIN index on the expression to_tsvector('english', text), which search
 *   repeats word for word so the planner uses it. No column of its own: the two schemas keep
 *   the same tables' columns, as `parley migrate-to-postgres` needs (it leaves FTS5's tables
 *   behind); for that too PostgreSQL has `seq`, unused there (null unless copied from SQLite).
 *
 * Both stem English words (FTS5's porter tokenizer, PostgreSQL's english dictionary), so
 * "opening" finds "open".
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("knowledge_bases")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("knowledge_bases_list").on("knowledge_bases").columns(["account_id", "created_at", "id"]).execute();

  await db.schema
    .createTable("kb_documents")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("knowledge_base_id", "text", (c) => c.notNull().references("knowledge_bases.id"))
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("content_type", "text", (c) => c.notNull())
    .addColumn("bytes", "integer", (c) => c.notNull())
    .addColumn("passages", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("kb_documents_list").on("kb_documents").columns(["knowledge_base_id", "created_at", "id"]).execute();

  if (isPostgres(db)) {
    await sql`CREATE TABLE kb_passages (
      seq bigint,
      id text PRIMARY KEY,
      document_id text NOT NULL REFERENCES kb_documents (id),
      knowledge_base_id text NOT NULL REFERENCES knowledge_bases (id),
      account_id text NOT NULL REFERENCES accounts (id),
      position integer NOT NULL,
      text text NOT NULL
    )`.execute(db);
    await sql`CREATE INDEX kb_passages_search ON kb_passages USING GIN (to_tsvector('english', text))`.execute(db);
  } else {
    await sql`CREATE TABLE kb_passages (
      seq INTEGER PRIMARY KEY,
      id text NOT NULL UNIQUE,
      document_id text NOT NULL REFERENCES kb_documents (id),
      knowledge_base_id text NOT NULL REFERENCES knowledge_bases (id),
      account_id text NOT NULL REFERENCES accounts (id),
      position integer NOT NULL,
      text text NOT NULL
    )`.execute(db);
    await sql`CREATE VIRTUAL TABLE kb_passages_fts USING fts5(text, content='kb_passages', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
    await sql`CREATE TRIGGER kb_passages_fts_insert AFTER INSERT ON kb_passages BEGIN
      INSERT INTO kb_passages_fts (rowid, text) VALUES (new.seq, new.text);
    END`.execute(db);
    await sql`CREATE TRIGGER kb_passages_fts_delete AFTER DELETE ON kb_passages BEGIN
      INSERT INTO kb_passages_fts (kb_passages_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    END`.execute(db);
    // Passages are never edited (a document is replaced by deleting it), but an update must not leave the index stale.
    await sql`CREATE TRIGGER kb_passages_fts_update AFTER UPDATE ON kb_passages BEGIN
      INSERT INTO kb_passages_fts (kb_passages_fts, rowid, text) VALUES ('delete', old.seq, old.text);
      INSERT INTO kb_passages_fts (rowid, text) VALUES (new.seq, new.text);
    END`.execute(db);
  }
  await db.schema.createIndex("kb_passages_document").on("kb_passages").columns(["document_id", "position"]).execute();
  await db.schema.createIndex("kb_passages_base").on("kb_passages").columns(["knowledge_base_id"]).execute();
  await db.schema.createIndex("kb_passages_account").on("kb_passages").columns(["account_id"]).execute();
}
