import { grants } from "./permissions.js";

/**
 * What of a stored event a key may read back (`GET /v1/events`). Events are read with
 * `webhooks:read`, but some carry what was said on a call or who an appointment is for; those
 * fields also need the permission that reads the resource itself, so that a key kept for
 * watching deliveries cannot read every call's content. Without it the fields are left out
 * and named in the item's `withheld`.
 */
interface ContentRule {
  /** Events whose name starts with this. */
  prefix: string;
  permission: "calls:read" | "appointments:read";
  /** The data fields that hold the content. */
  fields: readonly string[];
}

const CONTENT_RULES: readonly ContentRule[] = [
  // What was said, what the analysis drew from it, and the signed link that downloads the audio.
  { prefix: "call.", permission: "calls:read", fields: ["transcript", "recording_url", "extracted_data", "summary", "sentiment"] },
  // Who the appointment is for, and the free text written about it.
  { prefix: "appointment.", permission: "appointments:read", fields: ["customer_name", "customer_phone", "customer_email", "service", "notes"] },
];

/** An event's data as a key holding `held` may read it, and the fields left out. */
export function readableEventData(name: string, data: Record<string, unknown>, held: readonly string[]): { data: Record<string, unknown>; withheld: string[] } {
  const rule = CONTENT_RULES.find((r) => name.startsWith(r.prefix));
  if (!rule || grants(held, rule.permission)) return { data, withheld: [] };
  const withheld = rule.fields.filter((field) => field in data);
  if (withheld.length === 0) return { data, withheld };
  const readable: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (!withheld.includes(key)) readable[key] = value;
  return { data: readable, withheld };
}
