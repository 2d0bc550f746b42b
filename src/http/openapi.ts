import { z } from "zod";
import type { Config } from "../config.js";
import { errorEnvelope } from "./schemas/common.js";
import type { RouteSpec } from "./route.js";

const STATUS_OF_CODE: Record<string, number> = {
  invalid_api_key: 401,
  forbidden: 403,
  unauthorized: 403,
  rate_limit_exceeded: 429,
  insufficient_credits: 402,
  agent_limit_reached: 402,
  webhook_limit_reached: 402,
  secret_limit_reached: 409,
  knowledge_base_limit_reached: 409,
  document_limit_reached: 409,
  passage_limit_reached: 409,
  test_run_limit_reached: 409,
  test_runs_unavailable: 409,
  call_not_in_progress: 409,
  test_audio_limit_reached: 409,
  invalid_listen_token: 401,
  agent_in_use: 409,
  agent_inactive: 409,
  invalid_campaign_state: 409,
  appointment_already_cancelled: 409,
  phone_number_in_use: 409,
  phone_number_not_approved: 409,
  call_already_ended: 409,
  call_not_ended: 409,
  call_analysis_pending: 409,
  delivery_in_progress: 409,
  invalid_signature: 403,
  link_expired: 403,
  idempotency_key_in_use: 409,
  idempotency_key_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
};

/** HTTP status an error code is answered with (404 for `*_not_found`, 400 otherwise). */
export function statusOfErrorCode(code: string): number {
  return STATUS_OF_CODE[code] ?? (code.endsWith("_not_found") ? 404 : 400);
}

function jsonSchema(schema: z.ZodType, io: "input" | "output") {
  const out = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Record<string, unknown>;
  delete out.$schema;
  return out;
}

function parameters(spec: RouteSpec) {
  const out: unknown[] = [];
  for (const [where, schema] of [["path", spec.params], ["query", spec.query]] as const) {
    if (!schema) continue;
    const shape = jsonSchema(schema, "input") as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, s] of Object.entries(shape.properties ?? {})) {
      out.push({ name, in: where, required: where === "path" || (shape.required ?? []).includes(name), schema: s });
    }
  }
  return out;
}

/** OpenAPI 3.1 document built from the same route specs and zod schemas the router validates with. */
export function buildOpenApiDocument(routes: RouteSpec[], config: Config) {
  const paths: Record<string, Record<string, unknown>> = {};
  // One schema for every error answer, referred to: the envelope spelled out under each status of each operation was half the document.
  const errorResponse = { content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  for (const spec of routes) {
    const path = spec.path.replace(/:([a-z_]+)/g, "{$1}");
    const responses: Record<string, unknown> = {
      [String(spec.status)]: { description: "Success", content: { [spec.produces ?? "application/json"]: { schema: jsonSchema(spec.response, "output") } } },
    };
    if (spec.alsoStatus) {
      responses[String(spec.alsoStatus.status)] = { description: spec.alsoStatus.description, content: { "application/json": { schema: jsonSchema(spec.response, "output") } } };
    }
    const byStatus = new Map<number, string[]>();
    for (const code of ["invalid_api_key", "rate_limit_exceeded", ...(spec.permission ? ["forbidden"] : []), ...spec.errors]) {
      const status = statusOfErrorCode(code);
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      responses[String(status)] = { description: `Error codes: ${[...new Set(codes)].join(", ")}`, ...errorResponse };
    }
    const operation: Record<string, unknown> = {
      operationId: spec.operationId,
      summary: spec.summary,
      tags: [spec.tag],
      parameters: [
        ...parameters(spec),
        ...(spec.method === "post" ? [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string", maxLength: 255 } }] : []),
      ],
      responses,
      ...(spec.permission ? { "x-permission": spec.permission } : {}),
    };
    if (spec.body) {
      operation.requestBody = { required: true, content: { "application/json": { schema: jsonSchema(spec.body, "input") } } };
    }
    if (spec.rawBody) {
      const file = { schema: { type: "string", format: "binary", maxLength: spec.rawBody.limitBytes } };
      operation.requestBody = { required: true, description: spec.rawBody.description, content: Object.fromEntries(spec.rawBody.types.map((type) => [type, file])) };
    }
    paths[path] = { ...paths[path], [spec.method]: operation };
  }
  paths["/v1/calls/{call_id}/recording"] = { get: recordingOperation(errorResponse) };
  return {
    openapi: "3.1.0",
    info: { title: "Parley API", version: "1.0.0", description: "Voice-agent calling service. Errors use {error: {code, message, details?}, meta: {request_id}}." },
    servers: [{ url: config.baseUrl }],
    security: [{ bearerAuth: [] }],
    components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } }, schemas: { Error: jsonSchema(errorEnvelope, "output") } },
    paths,
  };
}

/** The signed recording link (see RecordingLinks): no API key, a WAV answer, so not a RouteSpec. */
function recordingOperation(errorResponse: Record<string, unknown>) {
  const query = (name: string, description: string) => ({ name, in: "query", required: true, description, schema: { type: "string" } });
  return {
    operationId: "getCallRecording",
    summary: "Download a call's recording through the signed link that GET /v1/calls/{id}?include=recording gives",
    tags: ["Calls"],
    security: [],
    parameters: [
      { name: "call_id", in: "path", required: true, schema: { type: "string" } },
      query("expires", "Expiry of the link, Unix seconds"),
      query("signature", "The link's signature"),
    ],
    responses: {
      "200": { description: "The stereo WAV: caller left, agent right", content: { "audio/wav": { schema: { type: "string", format: "binary" } } } },
      "403": { description: "Error codes: invalid_signature, link_expired", ...errorResponse },
      "404": { description: "Error codes: recording_not_found", ...errorResponse },
    },
  };
}
