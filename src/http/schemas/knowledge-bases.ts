import { z } from "zod";
import { KNOWLEDGE_LIMITS } from "../../services/knowledge-bases.js";
import { intField, listEnvelope, listQueryShape } from "./common.js";

const text = (max: number) =>
  z
    .string({ error: "must be a string" })
    .trim()
    .min(1, { message: `must be 1 to ${max} characters` })
    .max(max, { message: `must be 1 to ${max} characters` });

export const createKnowledgeBaseBody = z
  .object({
    name: text(200),
    description: text(2000).nullable().optional(),
  })
  .strict();

export const knowledgeBaseIdParam = z.object({ knowledge_base_id: z.string().min(1) }).strict();

export const documentParams = z.object({ knowledge_base_id: z.string().min(1), document_id: z.string().min(1) }).strict();

export const listKnowledgeBasesQuery = z.object({ ...listQueryShape }).strict();

/** `?name=` of an upload: the file name shown in lists and search results (the body is the file itself). */
export const uploadDocumentQuery = z.object({ name: text(255).describe("The document's file name, shown in lists and search results") }).strict();

export const searchKnowledgeBody = z
  .object({
    query: z
      .string({ error: "must be a string" })
      .min(1, { message: "must be 1 to 1000 characters" })
      .max(1000, { message: "must be 1 to 1000 characters" })
      .describe("A question in the caller's words: reduced to its words, never read as search syntax"),
    limit: intField(1, KNOWLEDGE_LIMITS.searchResults).default(3),
  })
  .strict();

export const knowledgeBaseSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const knowledgeBaseListSchema = listEnvelope(knowledgeBaseSchema);

export const knowledgeDocumentSchema = z.object({
  id: z.string(),
  knowledge_base_id: z.string(),
  name: z.string(),
  content_type: z.string(),
  bytes: z.number().int().describe("Size of the upload"),
  passages: z.number().int().describe("How many passages its text was cut into"),
  created_at: z.string(),
});

export const knowledgeDocumentListSchema = listEnvelope(knowledgeDocumentSchema);

export const searchResultSchema = z.object({
  data: z.array(
    z.object({
      passage_id: z.string(),
      document_id: z.string(),
      document_name: z.string(),
      knowledge_base_id: z.string(),
      text: z.string(),
      score: z.number().describe("Higher is better; comparable within one database engine only (SQLite: -bm25, PostgreSQL: ts_rank_cd)"),
    }),
  ),
});
