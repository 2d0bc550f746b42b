import type { JsonSchema } from "./json-schema-check.js";

/** One operation of the service's OpenAPI document, as the fuzz and the cross-account sweep walk it. */
export interface Operation {
  method: string;
  /** As the document writes it: `/v1/agents/{agent_id}`. */
  path: string;
  operationId: string;
  pathParams: string[];
  queryParams: Array<{ name: string; required: boolean; schema: JsonSchema }>;
  /** The JSON request body's schema, when the operation takes one. */
  body: JsonSchema | undefined;
  /** The success status the document declares, with its media type and schema. */
  success: { status: number; mediaType: string; schema: JsonSchema };
  /** Every status the document declares. */
  statuses: number[];
  /** False for the operations that take no API key (signed links). */
  authenticated: boolean;
}

/** Every operation of the document, in its order. */
export function operationsOf(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const params: any[] = op.parameters ?? [];
      const statuses = Object.keys(op.responses).map(Number);
      const status = Math.min(...statuses.filter((s) => s < 300));
      const [mediaType, content] = Object.entries<any>(op.responses[String(status)].content)[0]!;
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: params.filter((p) => p.in === "query").map((p) => ({ name: p.name, required: Boolean(p.required), schema: p.schema ?? {} })),
        body: op.requestBody?.content?.["application/json"]?.schema,
        success: { status, mediaType, schema: content.schema ?? {} },
        statuses,
        authenticated: !(Array.isArray(op.security) && op.security.length === 0),
      });
    }
  }
  return out;
}

/** The path with each `{param}` replaced by its value, already encoded for a URL path segment. */
export function fillPath(path: string, encoded: Record<string, string>): string {
  return path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const value = encoded[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name} of ${path}`);
    return value;
  });
}

/** A value for one field, by its name, when the caller knows a good one (ids, numbers, URLs). */
export type FieldHints = (name: string) => unknown;

/**
 * A value the schema accepts as far as its shape says: required properties, plus optional
 * ones the hints know (an id, a phone number). Rules the schema cannot say (an E.164 number,
 * a date) come from the hints.
 */
export function exampleOf(schema: JsonSchema, hints: FieldHints, name?: string): unknown {
  const hinted = name === undefined ? undefined : hints(name);
  if (hinted !== undefined) return structuredClone(hinted);
  if (schema.anyOf) return exampleOf((schema.anyOf as JsonSchema[]).find((s) => s.type !== "null") ?? schema.anyOf[0], hints, name);
  if ("const" in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const required: string[] = schema.required ?? [];
      for (const [prop, s] of Object.entries<JsonSchema>(schema.properties ?? {})) {
        if (required.includes(prop) || hints(prop) !== undefined) out[prop] = exampleOf(s, hints, prop);
      }
      return out;
    }
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => exampleOf(schema.items ?? {}, hints));
    case "string":
      return "x".repeat(Math.max(schema.minLength ?? 0, 8));
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return "x";
  }
}

/** Every property path of a body schema, nested objects included, with its schema: where an id could sit. */
export function bodyFields(schema: JsonSchema, prefix: string[] = []): Array<{ path: string[]; schema: JsonSchema }> {
  const out: Array<{ path: string[]; schema: JsonSchema }> = [];
  const branches: JsonSchema[] = schema.anyOf ?? [schema];
  for (const branch of branches) {
    for (const [prop, s] of Object.entries<JsonSchema>(branch.properties ?? {})) {
      out.push({ path: [...prefix, prop], schema: s });
      out.push(...bodyFields(s, [...prefix, prop]));
    }
  }
  return out;
}
