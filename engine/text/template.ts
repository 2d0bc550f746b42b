/**
 * Fills `{{name}}` placeholders (e.g. in `first_message`) from the call's context. A
 * placeholder with no value is dropped, so the agent never says "Hello {{customer_name}}";
 * the spaces and commas it leaves behind are tidied.
 */
export function fillTemplate(template: string, values: Record<string, unknown>): string {
  return template
    .replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (_, key: string) => {
      const value = values[key];
      return value === undefined || value === null || typeof value === "object" ? "" : String(value);
    })
    .replace(/\s+([,.!?])/g, "$1")
    .replace(/,([.!?])/g, "$1")
    .replace(/\s{2,}/g, " ")
    .trim();
}
