import { z } from "zod";
import type { AgentTool } from "../db/repositories/agents.js";

/*
 * What an agent's custom HTTP tool may be: the headers Parley keeps for itself, how header
 * values name account secrets, and the parameter schemas whose arguments Parley can check.
 * The agents service applies them when a tool is saved; http-tool.ts when one is called.
 */

/** The headers Parley sets on a tool's request: a tool's own header of these names is dropped. */
export const TOOL_HEADERS = { signature: "X-Parley-Signature", tool: "X-Parley-Tool" } as const;

/**
 * Header names a tool may not set (compared case-insensitively): Parley's own (`X-Parley-*`,
 * so a receiver can trust them), the sender's content-type and user-agent, and those that frame
 * the request itself.
 */
export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith("x-parley-") || ["content-type", "user-agent", "content-length", "transfer-encoding", "host", "connection"].includes(lower);
}

/** `{{secrets.NAME}}`, NAME as the secrets API accepts it. */
export const SECRET_REFERENCE = /\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}/g;

/** Names of the secrets a tool uses: its signing secret and every {{secrets.NAME}} in its header values. */
export function secretNamesOf(tool: Pick<AgentTool, "headers" | "signing_secret">): string[] {
  const names = new Set<string>([tool.signing_secret]);
  for (const value of Object.values(tool.headers)) for (const match of value.matchAll(SECRET_REFERENCE)) names.add(match[1]!);
  return [...names];
}

/** JSON Schema keywords a tool's parameters may use: what the checker is known to enforce, and no regular expressions (a caller's words must not be able to stall the service with a slow pattern). */
const SCHEMA_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "enum",
  "const",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "items",
  "minItems",
  "maxItems",
  "description",
  "title",
]);
const TYPES = new Set(["object", "string", "number", "integer", "boolean", "array", "null"]);
const MAX_SCHEMA_DEPTH = 8;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;

/** Throws naming the first thing in `schema` (at `where`) the checker cannot enforce. */
function vetSchema(schema: unknown, where: string, depth: number): void {
  if (depth > MAX_SCHEMA_DEPTH) throw new Error(`${where}: nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
  if (!isObject(schema)) throw new Error(`${where}: must be a JSON Schema object`);
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYWORDS.has(key)) throw new Error(`${where}: the keyword "${key}" is not supported (supported: ${[...SCHEMA_KEYWORDS].join(", ")})`);
    const bad = (what: string) => new Error(`${where}.${key}: must be ${what}`);
    switch (key) {
      case "type": {
        const types = Array.isArray(value) ? value : [value];
        if (types.length === 0 || !types.every((t) => typeof t === "string" && TYPES.has(t))) throw bad(`one of ${[...TYPES].join(", ")} (or a list of them)`);
        break;
      }
      case "properties":
        if (!isObject(value)) throw bad("an object of schemas");
        for (const [name, property] of Object.entries(value)) vetSchema(property, `${where}.properties.${name}`, depth + 1);
        break;
      case "required":
        if (!Array.isArray(value) || !value.every((n) => typeof n === "string")) throw bad("a list of property names");
        break;
      case "additionalProperties":
        if (typeof value !== "boolean") vetSchema(value, `${where}.additionalProperties`, depth + 1);
        break;
      case "items":
        vetSchema(value, `${where}.items`, depth + 1);
        break;
      case "enum":
        if (!Array.isArray(value) || value.length === 0) throw bad("a non-empty list");
        break;
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
        if (typeof value !== "number" || !Number.isFinite(value)) throw bad("a number");
        break;
      case "multipleOf":
        if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value)) throw bad("a number above 0");
        break;
      case "minLength":
      case "maxLength":
      case "minItems":
      case "maxItems":
        if (!isCount(value)) throw bad("an integer of 0 or more");
        break;
      case "description":
      case "title":
        if (typeof value !== "string") throw bad("a string");
        break;
    }
  }
}

/** `order.items.0` for an issue's path, or null for the arguments as a whole. */
function argumentName(path: readonly PropertyKey[]): string | null {
  return path.length === 0 ? null : path.map(String).join(".");
}

/** The value at `path` in `args` (to tell a missing argument from a wrong one). */
function valueAt(args: unknown, path: readonly PropertyKey[]): unknown {
  let at = args;
  for (const key of path) at = isObject(at) || Array.isArray(at) ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

/**
 * A checker of arguments against the tool's JSON Schema: null when they pass, else a short
 * problem naming the argument. Throws if the schema itself is not usable (the agents service calls it
 * when a tool is saved, to refuse such a schema): it must be an object's schema using only SCHEMA_KEYWORDS.
 * zod's `fromJSONSchema` enforces them (type, properties, required, enum, bounds, lengths,
 * additionalProperties: false).
 */
export function argumentsChecker(parameters: Record<string, unknown>): (args: unknown) => string | null {
  vetSchema(parameters, "parameters", 0);
  if (parameters.type !== "object") throw new Error(`parameters: "type" must be "object"`);
  const schema = z.fromJSONSchema(parameters as Parameters<typeof z.fromJSONSchema>[0]);
  return (args) => {
    const result = schema.safeParse(args);
    if (result.success) return null;
    const issue = result.error.issues[0]!;
    const name = argumentName(issue.path);
    if (issue.code === "unrecognized_keys") {
      const extra = issue.keys.join(", ");
      return name ? `unexpected argument(s) in ${name}: ${extra}` : `unexpected argument(s): ${extra}`;
    }
    if (name && issue.code === "invalid_type" && valueAt(args, issue.path) === undefined) return `missing required argument ${name}`;
    const problem = issue.message.replace(/^Invalid input: /, "");
    return name ? `argument ${name}: ${problem}` : `the arguments: ${problem}`;
  };
}
