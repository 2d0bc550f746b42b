import type { ContactRecord } from "../db/repositories/campaign-contacts.js";
import type { CallRecord } from "../db/repositories/calls.js";

/** The fixed columns of `results.csv`, before one column per extracted-data field. */
export const RESULT_COLUMNS = ["contact_id", "phone", "status", "reason", "attempts", "last_call_id", "last_call_status", "duration_seconds", "outcome"] as const;

/**
 * A campaign's results, one row per contact in calling order: its final (or current) status,
 * attempts, its last call with duration and outcome, then a column `extracted_data.<field>`
 * for every field any last call extracted (sorted by name), unless `extractedData` is false
 * (the reader may not read calls' content: see event-content.ts). RFC 4180: CRLF line ends, fields
 * quoted when they hold a comma, quote or line break. A value a spreadsheet would run as a
 * formula (starting with =, +, -, @, tab or CR) is prefixed with an apostrophe, except the
 * validated E.164 phone column, whose leading + only makes a number.
 */
export function campaignResultsCsv(contacts: readonly ContactRecord[], lastCalls: ReadonlyMap<string, CallRecord>, extractedData = true): string {
  const fields = new Set<string>();
  if (extractedData) for (const call of lastCalls.values()) for (const field of Object.keys(extracted(call))) fields.add(field);
  const extraColumns = [...fields].sort();
  const lines = [[...RESULT_COLUMNS, ...extraColumns.map((f) => `extracted_data.${f}`)].map((h) => cell(h)).join(",")];
  for (const contact of contacts) {
    const call = contact.call_id ? lastCalls.get(contact.call_id) : undefined;
    const data = call ? extracted(call) : {};
    const row: unknown[] = [
      contact.id,
      contact.phone,
      contact.status,
      contact.reason,
      contact.attempts,
      call?.id,
      call?.status,
      call?.duration,
      call?.outcome ?? null,
      ...extraColumns.map((f) => data[f]),
    ];
    lines.push(row.map((value, i) => cell(value, i === 1)).join(","));
  }
  return lines.join("\r\n") + "\r\n";
}

function extracted(call: CallRecord): Record<string, unknown> {
  return call.analysis_pending ? {} : (call.analysis?.extracted_data ?? {});
}

function cell(value: unknown, trusted = false): string {
  if (value === null || value === undefined) return "";
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (!trusted && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
