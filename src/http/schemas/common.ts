import { z } from "zod";
import { readPhoneNumber } from "../../core/phone-number.js";
import { parseIsoTimestamp } from "../../core/time.js";

/** Shared pieces of request and response schemas. */

/**
 * A phone number field: E.164 text that is a possible number of its country, given on in its
 * canonical form (`+4407700900123` -> `+447700900123`; see core/phone-number.ts), so that
 * what is stored and compared is one spelling per number. A refused number keeps its field's
 * error code (validation.ts) and says why: `phone_number: +4477009 is not a possible number
 * for GB (too short)`.
 */
export const e164 = (field: string) =>
  z
    .string({ error: `${field} must be a string` })
    .transform((value, ctx) => {
      const read = readPhoneNumber(value);
      if (read.number !== undefined) return read.number;
      ctx.addIssue({ code: "custom", message: read.problem, input: value });
      return z.NEVER;
    });

/**
 * How deep a free JSON object may nest. No real metadata comes near it; a few thousand levels
 * (which fit in the body limit) overflow the stack when the object is serialised.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether `value` nests deeper than `max` objects or arrays (counted without recursion). */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Free key-value pairs: any JSON object (not an array, not null), at most MAX_JSON_DEPTH levels deep and 16 KB as JSON. */
export const metadataSchema = z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).superRefine((v, ctx) => {
  if (nestsDeeperThan(v, MAX_JSON_DEPTH)) ctx.addIssue({ code: "custom", message: `must nest at most ${MAX_JSON_DEPTH} levels deep` });
  else if (JSON.stringify(v).length > 16_384) ctx.addIssue({ code: "custom", message: "must be at most 16384 bytes as JSON" });
});

/** A body integer from `min` to `max`, every mistake told in one message (`also` names what else is allowed). */
export const intField = (min: number, max: number, also = "") => {
  const message = `must be an integer from ${min} to ${max}${also}`;
  return z.number({ error: message }).int({ message }).min(min, { message }).max(max, { message });
};

export const intQuery = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: `must be an integer from ${min} to ${max}` })
    .transform(Number)
    .pipe(z.number().int().min(min, { message: `must be an integer from ${min} to ${max}` }).max(max, { message: `must be an integer from ${min} to ${max}` }))
    // Described to OpenAPI as what it means (an integer), not as the text a query string carries.
    .meta({ type: "integer", minimum: min, maximum: max, pattern: undefined });

export const orderQuery = z.enum(["asc", "desc"], { error: "must be asc or desc" }).default("desc");

/** `limit`, `cursor`, `order`: the paging parameters of every list. */
export const listQueryShape = {
  limit: intQuery(1, 100).default(20),
  cursor: z.string().min(1, { message: "must not be empty" }).optional(),
  order: orderQuery,
};

/** `include=a,b`: a comma-separated subset of `allowed`, returned as a set. */
export function includeQuery<const T extends readonly [string, ...string[]]>(allowed: T) {
  return z
    .string()
    .transform((value, ctx) => {
      const parts = value.split(",").map((p) => p.trim()).filter(Boolean);
      const unknown = parts.filter((p) => !allowed.includes(p));
      if (unknown.length > 0) {
        ctx.addIssue({ code: "custom", message: `unknown value ${unknown.map((u) => `'${u}'`).join(", ")}; allowed: ${allowed.join(", ")}` });
        return z.NEVER;
      }
      return new Set(parts as T[number][]);
    })
    .optional()
    .transform((v) => v ?? new Set<T[number]>());
}

/** An ISO 8601 date or date-time query value, normalised to UTC (time filters of lists). */
const isoDate = z.string().transform((value, ctx) => {
  const iso = parseIsoTimestamp(value);
  if (iso === null) {
    ctx.addIssue({ code: "custom", message: "must be an ISO 8601 date or date-time, like 2026-01-31 or 2026-01-31T09:00:00Z" });
    return z.NEVER;
  }
  return iso;
});

/** A list's time filter: `from_date` (inclusive) and `to_date` (exclusive) on `created_at`. */
export const dateRangeShape = {
  from_date: isoDate.optional(),
  to_date: isoDate.optional(),
};

/**
 * Refuses a time filter whose start is after its end: `.refine(dateRangeInOrder, DATE_RANGE_ISSUE)`.
 * A refine, not a superRefine: on the call list's query, zod's superRefine made each parse
 * about 4 times slower and kept its garbage alive through young collections (2 MB each).
 */
export function dateRangeInOrder(value: { from_date?: string | undefined; to_date?: string | undefined }): boolean {
  return value.from_date === undefined || value.to_date === undefined || value.from_date <= value.to_date;
}
export const DATE_RANGE_ISSUE = { path: ["from_date"], message: "must not be later than to_date" };

export const idParam = <const N extends string>(name: N) =>
  z.object({ [name]: z.string().min(1) } as { [K in N]: z.ZodString }).strict();

export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });

export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable(), total: z.number().int() });

export const errorEnvelope = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
  meta: z.object({ request_id: z.string() }),
});
