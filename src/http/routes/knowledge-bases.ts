import type { Services } from "../../services/container.js";
import { DOCUMENT_TYPES, type DocumentType } from "../../services/document-text.js";
import { KNOWLEDGE_LIMITS } from "../../services/knowledge-bases.js";
import { mediaTypeOf } from "../middleware/raw-body.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { deletedSchema } from "../schemas/common.js";
import {
  createKnowledgeBaseBody,
  documentParams,
  knowledgeBaseIdParam,
  knowledgeBaseListSchema,
  knowledgeBaseSchema,
  knowledgeDocumentListSchema,
  knowledgeDocumentSchema,
  listKnowledgeBasesQuery,
  searchKnowledgeBody,
  searchResultSchema,
  uploadDocumentQuery,
} from "../schemas/knowledge-bases.js";

const TAG = "Knowledge bases";

export function knowledgeBaseRoutes({ knowledgeBases }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/knowledge-bases",
      operationId: "createKnowledgeBase",
      summary: "Create a knowledge base: documents an agent with its id in knowledge_base_ids answers callers from",
      tag: TAG,
      permission: "knowledge:write",
      body: createKnowledgeBaseBody,
      response: knowledgeBaseSchema,
      status: 201,
      errors: ["invalid_request", "knowledge_base_limit_reached"],
      handler: async ({ auth, body }) => knowledgeBases.create(auth.account.id, body),
    }),
    defineRoute({
      method: "get",
      path: "/v1/knowledge-bases",
      operationId: "listKnowledgeBases",
      summary: "List the account's knowledge bases",
      tag: TAG,
      permission: "knowledge:read",
      query: listKnowledgeBasesQuery,
      response: knowledgeBaseListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor"],
      handler: async ({ auth, query }) => knowledgeBases.list(auth.account.id, query),
    }),
    defineRoute({
      method: "get",
      path: "/v1/knowledge-bases/:knowledge_base_id",
      operationId: "getKnowledgeBase",
      summary: "Get a knowledge base",
      tag: TAG,
      permission: "knowledge:read",
      params: knowledgeBaseIdParam,
      response: knowledgeBaseSchema,
      status: 200,
      errors: ["invalid_request", "knowledge_base_not_found"],
      handler: async ({ auth, params }) => knowledgeBases.get(auth.account.id, params.knowledge_base_id),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/knowledge-bases/:knowledge_base_id",
      operationId: "deleteKnowledgeBase",
      summary: "Delete a knowledge base with its documents; none of them answers a search again",
      tag: TAG,
      permission: "knowledge:write",
      params: knowledgeBaseIdParam,
      response: deletedSchema,
      status: 200,
      errors: ["invalid_request", "knowledge_base_not_found"],
      handler: async ({ auth, params }) => {
        await knowledgeBases.delete(auth.account.id, params.knowledge_base_id);
        return { id: params.knowledge_base_id, deleted: true as const };
      },
    }),
    defineRoute({
      method: "post",
      path: "/v1/knowledge-bases/:knowledge_base_id/documents",
      operationId: "uploadKnowledgeDocument",
      summary: `Upload a document (the body is the file, its type in Content-Type: ${DOCUMENT_TYPES.join(", ")}; at most 5 MiB): its text is cut into passages and indexed`,
      tag: TAG,
      permission: "knowledge:write",
      params: knowledgeBaseIdParam,
      query: uploadDocumentQuery,
      rawBody: { types: DOCUMENT_TYPES, limitBytes: KNOWLEDGE_LIMITS.documentBytes, description: "The document's bytes; charset parameters of the Content-Type are allowed" },
      response: knowledgeDocumentSchema,
      status: 201,
      errors: ["invalid_request", "invalid_document", "knowledge_base_not_found", "document_limit_reached", "passage_limit_reached", "payload_too_large", "unsupported_media_type"],
      handler: async ({ auth, params, query, body, req }) =>
        knowledgeBases.addDocument(auth.account.id, params.knowledge_base_id, {
          name: query.name,
          // rawBody let through only the types of DOCUMENT_TYPES.
          type: mediaTypeOf(req.headers["content-type"]) as DocumentType,
          bytes: body as unknown as Buffer,
        }),
    }),
    defineRoute({
      method: "get",
      path: "/v1/knowledge-bases/:knowledge_base_id/documents",
      operationId: "listKnowledgeDocuments",
      summary: "List a knowledge base's documents",
      tag: TAG,
      permission: "knowledge:read",
      params: knowledgeBaseIdParam,
      query: listKnowledgeBasesQuery,
      response: knowledgeDocumentListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "knowledge_base_not_found"],
      handler: async ({ auth, params, query }) => knowledgeBases.listDocuments(auth.account.id, params.knowledge_base_id, query),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/knowledge-bases/:knowledge_base_id/documents/:document_id",
      operationId: "deleteKnowledgeDocument",
      summary: "Delete a document: its passages leave the search index at once",
      tag: TAG,
      permission: "knowledge:write",
      params: documentParams,
      response: deletedSchema,
      status: 200,
      errors: ["invalid_request", "knowledge_base_not_found", "document_not_found"],
      handler: async ({ auth, params }) => {
        await knowledgeBases.deleteDocument(auth.account.id, params.knowledge_base_id, params.document_id);
        return { id: params.document_id, deleted: true as const };
      },
    }),
    defineRoute({
      method: "post",
      path: "/v1/knowledge-bases/:knowledge_base_id/search",
      operationId: "searchKnowledgeBase",
      summary: "Search a knowledge base as an agent would for a caller's question: its best passages, best first",
      tag: TAG,
      permission: "knowledge:read",
      params: knowledgeBaseIdParam,
      body: searchKnowledgeBody,
      response: searchResultSchema,
      status: 200,
      errors: ["invalid_request", "knowledge_base_not_found"],
      handler: async ({ auth, params, body }) => {
        // 404 for an id the account lacks (search alone would quietly find nothing).
        await knowledgeBases.get(auth.account.id, params.knowledge_base_id);
        return { data: await knowledgeBases.search(auth.account.id, [params.knowledge_base_id], body.query, body.limit) };
      },
    }),
  ];
}
