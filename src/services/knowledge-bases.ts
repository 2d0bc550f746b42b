import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import type { Db } from "../db/database.js";
import { KnowledgeBasesRepository, type PassageHit } from "../db/repositories/knowledge-bases.js";
import type { KbDocumentTable, KnowledgeBaseTable } from "../db/schema.js";
import type { CursorCodec } from "./cursor-codec.js";
import { readDocument } from "./document-reader.js";
import { DocumentTextError, splitPassages, type DocumentType } from "./document-text.js";
import { fts5Query, searchTerms, tsQuery } from "./knowledge-search-terms.js";
import { listPage, type ListQuery } from "./list-page.js";

export type { PassageHit } from "../db/repositories/knowledge-bases.js";

/** Fixed bounds (not a plan's): what an agent answering from documents needs, and what keeps search cheap. */
export const KNOWLEDGE_LIMITS = {
  basesPerAccount: 20,
  documentsPerBase: 200,
  passagesPerAccount: 20_000,
  /** Largest upload, in bytes (5 MiB). */
  documentBytes: 5 * 1024 * 1024,
  /** Most passages one search answers with. */
  searchResults: 20,
} as const;

export interface KnowledgeBase {
  id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeDocument {
  id: string;
  knowledge_base_id: string;
  name: string;
  content_type: string;
  bytes: number;
  passages: number;
  created_at: string;
}

const presentBase = ({ id, name, description, created_at, updated_at }: KnowledgeBaseTable): KnowledgeBase => ({ id, name, description, created_at, updated_at });
const presentDocument = ({ id, knowledge_base_id, name, content_type, bytes, passages, created_at }: KbDocumentTable): KnowledgeDocument => ({
  id,
  knowledge_base_id,
  name,
  content_type,
  bytes,
  passages,
  created_at,
});

const baseNotFound = (id: string) => new ApiError(404, "knowledge_base_not_found", `No knowledge base with id ${id}`);

/**
 * An account's knowledge bases (issue 31): documents uploaded as text, Markdown, HTML or PDF,
 * cut into passages and indexed for full-text search, so an agent can answer callers from
 * them. Every read and write is scoped to the account; another account's id is not found.
 */
export class KnowledgeBasesService {
  private readonly repo: KnowledgeBasesRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { cursors: CursorCodec },
  ) {
    this.repo = new KnowledgeBasesRepository(db);
  }

  /** A new, empty knowledge base; 409 `knowledge_base_limit_reached` past the account's 20 (counted under its lock). */
  async create(accountId: string, input: { name: string; description?: string | null | undefined }): Promise<KnowledgeBase> {
    return this.db.transaction().execute(async (trx) => {
      await holdAccountLock(trx, accountId);
      if ((await this.repo.countBases(accountId, trx)) >= KNOWLEDGE_LIMITS.basesPerAccount) {
        throw new ApiError(409, "knowledge_base_limit_reached", `An account holds at most ${KNOWLEDGE_LIMITS.basesPerAccount} knowledge bases; delete one first`);
      }
      const at = nowIso();
      const row: KnowledgeBaseTable = { id: newId("knowledgeBase"), account_id: accountId, name: input.name, description: input.description ?? null, created_at: at, updated_at: at };
      await this.repo.insertBase(row, trx);
      return presentBase(row);
    });
  }

  list(accountId: string, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "knowledge_bases",
      filters: {},
      query,
      fetch: (page) => this.repo.pageBases(accountId, page),
      count: () => this.repo.countBases(accountId),
      present: presentBase,
    });
  }

  async get(accountId: string, id: string): Promise<KnowledgeBase> {
    const row = await this.repo.findBase(accountId, id);
    if (!row) throw baseNotFound(id);
    return presentBase(row);
  }

  /** Deletes the knowledge base, its documents and their passages, all in one transaction. */
  async delete(accountId: string, id: string): Promise<void> {
    const deleted = await this.db.transaction().execute((trx) => this.repo.deleteBase(accountId, id, trx));
    if (!deleted) throw baseNotFound(id);
  }

  /**
   * Reads the document's text (document-text.ts, on a worker thread: document-reader.ts), cuts it
   * into passages and stores the document with them in one transaction (the index follows the passages in it). 400 `invalid_document`
   * when no text can be read from it; 409 past 200 documents in the knowledge base or 20,000
   * passages in the account, counted under the account's lock.
   */
  async addDocument(accountId: string, baseId: string, input: { name: string; type: DocumentType; bytes: Buffer }): Promise<KnowledgeDocument> {
    // Found before the work of reading the document, and again under the lock below.
    if (!(await this.repo.findBase(accountId, baseId))) throw baseNotFound(baseId);
    let passages: string[];
    try {
      passages = splitPassages(await readDocument(input.bytes, input.type));
    } catch (err) {
      if (err instanceof DocumentTextError) throw new ApiError(400, "invalid_document", err.message);
      throw err;
    }
    if (passages.length === 0) throw new ApiError(400, "invalid_document", "The document holds no text to search");
    return this.db.transaction().execute(async (trx) => {
      await holdAccountLock(trx, accountId);
      const base = await this.repo.findBase(accountId, baseId, trx);
      if (!base) throw baseNotFound(baseId);
      if ((await this.repo.countDocuments(accountId, baseId, trx)) >= KNOWLEDGE_LIMITS.documentsPerBase) {
        throw new ApiError(409, "document_limit_reached", `A knowledge base holds at most ${KNOWLEDGE_LIMITS.documentsPerBase} documents; delete one first`);
      }
      const held = await this.repo.countPassages(accountId, trx);
      if (held + passages.length > KNOWLEDGE_LIMITS.passagesPerAccount) {
        throw new ApiError(
          409,
          "passage_limit_reached",
          `This document makes ${passages.length} passages and the account holds ${held}: at most ${KNOWLEDGE_LIMITS.passagesPerAccount} in all its knowledge bases`,
          { passages: passages.length, held, limit: KNOWLEDGE_LIMITS.passagesPerAccount },
        );
      }
      const document: KbDocumentTable = {
        id: newId("kbDocument"),
        knowledge_base_id: baseId,
        account_id: accountId,
        name: input.name,
        content_type: input.type,
        bytes: input.bytes.length,
        passages: passages.length,
        created_at: nowIso(),
      };
      const rows = passages.map((text, position) => ({ id: newId("kbPassage"), document_id: document.id, knowledge_base_id: baseId, account_id: accountId, position, text }));
      await this.repo.insertDocument(document, rows, trx);
      await this.repo.touchBase(accountId, baseId, nextUpdatedAt(base.updated_at), trx);
      return presentDocument(document);
    });
  }

  async listDocuments(accountId: string, baseId: string, query: ListQuery) {
    if (!(await this.repo.findBase(accountId, baseId))) throw baseNotFound(baseId);
    return listPage({
      codec: this.deps.cursors,
      list: "kb_documents",
      filters: { knowledge_base_id: baseId },
      query,
      fetch: (page) => this.repo.pageDocuments(accountId, baseId, page),
      count: () => this.repo.countDocuments(accountId, baseId),
      present: presentDocument,
    });
  }

  /** Deletes the document; its passages leave the index in the same transaction, so it never answers a search again. */
  async deleteDocument(accountId: string, baseId: string, documentId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const base = await this.repo.findBase(accountId, baseId, trx);
      if (!base) throw baseNotFound(baseId);
      if (!(await this.repo.deleteDocument(accountId, baseId, documentId, trx))) throw new ApiError(404, "document_not_found", `No document with id ${documentId} in knowledge base ${baseId}`);
      await this.repo.touchBase(accountId, baseId, nextUpdatedAt(base.updated_at), trx);
    });
  }

  /**
   * The passages of the account's knowledge bases `kbIds` that best answer `question`, best
   * first (`score` higher is better; see PassageHit for what it is on each database). Ids the
   * account does not hold are ignored. The question is reduced to its words
   * (knowledge-search-terms.ts), never given to the search syntax as it is; a question of no
   * words but stop words finds nothing.
   */
  async search(accountId: string, kbIds: readonly string[], question: string, limit = 3): Promise<PassageHit[]> {
    const terms = searchTerms(question);
    if (terms.length === 0 || kbIds.length === 0 || limit < 1) return [];
    const owned = await this.repo.ownedBaseIds(accountId, [...new Set(kbIds)]);
    const bounded = Math.min(Math.floor(limit), KNOWLEDGE_LIMITS.searchResults);
    return this.repo.search(accountId, owned, { fts5: fts5Query(terms), tsquery: tsQuery(terms) }, bounded);
  }
}
