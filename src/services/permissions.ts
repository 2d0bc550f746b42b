/** Permissions an API key can hold. `*` grants all; a `:write` permission includes its `:read`. */
export const PERMISSIONS = [
  "account:read",
  "agents:read",
  "agents:write",
  "calls:read",
  "calls:write",
  "numbers:read",
  "numbers:write",
  "webhooks:read",
  "webhooks:write",
  "campaigns:read",
  "campaigns:write",
  "appointments:read",
  "appointments:write",
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission | "*" {
  return value === "*" || (PERMISSIONS as readonly string[]).includes(value);
}

export function grants(held: readonly string[], needed: string): boolean {
  if (held.includes("*") || held.includes(needed)) return true;
  if (needed.endsWith(":read")) return held.includes(needed.replace(/:read$/, ":write"));
  return false;
}
