/**
 * Renders free-form JSON (agent metadata, call context) as indented "key: value" lines a model
 * reads easily, e.g. `business name: Bright Smile Dental`, an FAQ as a list of question and
 * answer pairs. Empty values are left out.
 */
export function factsText(record: Record<string, unknown>): string {
  return entryLines(record, "").join("\n");
}

function entryLines(record: Record<string, unknown>, indent: string): string[] {
  return Object.entries(record).flatMap(([key, value]) => valueLines(key.replace(/[_-]+/g, " "), value, indent));
}

function valueLines(label: string, value: unknown, indent: string): string[] {
  if (isEmpty(value)) return [];
  if (isScalar(value)) return [`${indent}${label}: ${String(value)}`];
  if (Array.isArray(value)) {
    const items = value.filter((item) => !isEmpty(item));
    if (items.every(isScalar)) return [`${indent}${label}: ${items.map(String).join(", ")}`];
    return [`${indent}${label}:`, ...items.flatMap((item) => listItemLines(item, `${indent}  `))];
  }
  return [`${indent}${label}:`, ...entryLines(value as Record<string, unknown>, `${indent}  `)];
}

function listItemLines(item: unknown, indent: string): string[] {
  if (isScalar(item)) return [`${indent}- ${String(item)}`];
  const lines = Array.isArray(item) ? valueLines("items", item, `${indent}  `) : entryLines(item as Record<string, unknown>, `${indent}  `);
  // The first line of the item carries the dash.
  return lines.map((line, i) => (i === 0 ? `${indent}- ${line.trimStart()}` : line));
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.every(isEmpty);
  if (typeof value === "object") return Object.values(value).every(isEmpty);
  return typeof value !== "number" && typeof value !== "boolean";
}
