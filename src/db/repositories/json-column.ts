/** JSON text columns: parse on the way out, stringify on the way in. */
export function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}
