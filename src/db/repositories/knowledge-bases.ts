import { sql } from "kysely";
import type { Db } from "../database.js";
import { isPostgres } from "../dialect.js";
import type { KbDocumentTable, KbPassageTable, KnowledgeBaseTable } from "../schema.js";
import { literalLimit } from "../literal-limit.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

/** One passage a search found, best first. */
export interface PassageHit {
  passage_id: string;
  document_id: string;
  document_name: string;
  knowledge_base_id: string;
  text: string;
  /**
   * Higher is better on both databases, comparable only within one engine. SQLite: minus FTS5's
   * bm25() (bm25 is negative, lower better; its negation is positive, typically 0.1 to 20,
   * growing with how many rare terms of the question the passage holds). PostgreSQL:
   * ts_rank_cd() with normalisation 1 (cover density divided by 1 + log of the passage's
   * length), typically 0.01 to 1.
   */
  score: number;
}

/**
 * Knowledge bases, their documents and passages. Every query is scoped to the account: an id
 * of another account's finds nothing. The full-text index follows kb_passages by itself (FTS5
 * triggers on SQLite, an expression index on PostgreSQL, see migration 029), so inserting or
 * deleting passages in a transaction is all it takes to keep search in step.
 */
export class KnowledgeBasesRepository {
  constructor(private readonly db: Db) {}

  async insertBase(row: KnowledgeBaseTable, db: Db = this.db): Promise<void> {
    await db.insertInto("knowledge_bases").values(row).execute();
  }

  async findBase(accountId: string, id: string, db: Db = this.db): Promise<KnowledgeBaseTable | undefined> {
    return db.selectFrom("knowledge_bases").selectAll().where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
  }

  /** Which of `ids` are the account's knowledge bases. */
  async ownedBaseIds(accountId: string, ids: readonly string[], db: Db = this.db): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await db.selectFrom("knowledge_bases").select("id").where("account_id", "=", accountId).where("id", "in", [...ids]).execute();
    return rows.map((r) => r.id);
  }

  async pageBases(accountId: string, page: PageRequest): Promise<Page<KnowledgeBaseTable>> {
    return fetchPage(this.db.selectFrom("knowledge_bases").selectAll().where("account_id", "=", accountId), "knowledge_bases", page);
  }

  async countBases(accountId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectFrom("knowledge_bases").where("account_id", "=", accountId).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Removes the knowledge base with its documents and passages (their index entries with them); false when the account has none of that id. */
  async deleteBase(accountId: string, id: string, db: Db): Promise<boolean> {
    await db.deleteFrom("kb_passages").where("account_id", "=", accountId).where("knowledge_base_id", "=", id).execute();
    await db.deleteFrom("kb_documents").where("account_id", "=", accountId).where("knowledge_base_id", "=", id).execute();
    const result = await db.deleteFrom("knowledge_bases").where("account_id", "=", accountId).where("id", "=", id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async touchBase(accountId: string, id: string, updatedAt: string, db: Db): Promise<void> {
    await db.updateTable("knowledge_bases").set({ updated_at: updatedAt }).where("account_id", "=", accountId).where("id", "=", id).execute();
  }

  async insertDocument(document: KbDocumentTable, passages: readonly KbPassageTable[], db: Db): Promise<void> {
    await db.insertInto("kb_documents").values(document).execute();
    // In slices: SQLite binds at most 32,766 values a statement, PostgreSQL 65,535 (7 a row).
    for (let i = 0; i < passages.length; i += 500) {
      await db.insertInto("kb_passages").values(passages.slice(i, i + 500)).execute();
    }
  }

  async findDocument(accountId: string, baseId: string, id: string, db: Db = this.db): Promise<KbDocumentTable | undefined> {
    return db.selectFrom("kb_documents").selectAll().where("account_id", "=", accountId).where("knowledge_base_id", "=", baseId).where("id", "=", id).executeTakeFirst();
  }

  async pageDocuments(accountId: string, baseId: string, page: PageRequest): Promise<Page<KbDocumentTable>> {
    return fetchPage(this.db.selectFrom("kb_documents").selectAll().where("account_id", "=", accountId).where("knowledge_base_id", "=", baseId), "kb_documents", page);
  }

  async countDocuments(accountId: string, baseId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectFrom("kb_documents").where("account_id", "=", accountId).where("knowledge_base_id", "=", baseId).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Passages the account holds across its knowledge bases (the sum of its documents' counts). */
  async countPassages(accountId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectFrom("kb_documents").where("account_id", "=", accountId).select((eb) => eb.fn.coalesce(eb.fn.sum<number>("passages"), sql<number>`0`).as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Removes the document and its passages (out of the index in the same transaction); false when there is none. */
  async deleteDocument(accountId: string, baseId: string, id: string, db: Db): Promise<boolean> {
    await db.deleteFrom("kb_passages").where("account_id", "=", accountId).where("knowledge_base_id", "=", baseId).where("document_id", "=", id).execute();
    const result = await db.deleteFrom("kb_documents").where("account_id", "=", accountId).where("knowledge_base_id", "=", baseId).where("id", "=", id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * The best `limit` passages of the account's `baseIds` for a query built from sanitised terms
   * (knowledge-search-terms.ts): `fts5` for SQLite's MATCH, `tsquery` for PostgreSQL's to_tsquery.
   */
  async search(accountId: string, baseIds: readonly string[], query: { fts5: string; tsquery: string }, limit: number): Promise<PassageHit[]> {
    if (baseIds.length === 0) return [];
    const bases = sql.join(baseIds.map((id) => sql`${id}`));
    if (isPostgres(this.db)) {
      const { rows } = await sql<PassageHit>`
        SELECT p.id AS passage_id, p.document_id, d.name AS document_name, p.knowledge_base_id, p.text,
               ts_rank_cd(to_tsvector('english', p.text), q.query, 1)::float8 AS score
        FROM kb_passages p
        JOIN kb_documents d ON d.id = p.document_id
        CROSS JOIN to_tsquery('english', ${query.tsquery}) AS q(query)
        WHERE p.account_id = ${accountId} AND p.knowledge_base_id IN (${bases}) AND to_tsvector('english', p.text) @@ q.query
        ORDER BY score DESC, p.id
        LIMIT ${literalLimit(limit)}`.execute(this.db);
      return rows.map((r) => ({ ...r, score: Number(r.score) }));
    }
    const { rows } = await sql<PassageHit>`
      SELECT p.id AS passage_id, p.document_id, d.name AS document_name, p.knowledge_base_id, p.text,
             -bm25(kb_passages_fts) AS score
      FROM kb_passages_fts
      JOIN kb_passages p ON p.seq = kb_passages_fts.rowid
      JOIN kb_documents d ON d.id = p.document_id
      WHERE kb_passages_fts MATCH ${query.fts5} AND p.account_id = ${accountId} AND p.knowledge_base_id IN (${bases})
      ORDER BY bm25(kb_passages_fts), p.id
      LIMIT ${literalLimit(limit)}`.execute(this.db);
    return rows;
  }
}
