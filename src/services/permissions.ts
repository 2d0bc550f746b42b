import { ApiError } from "../core/api-error.js";

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
  "secrets:read",
  "secrets:write",
  "knowledge:read",
  "knowledge:write",
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

/**
 * 403 `forbidden` for a change of `fields` that needs `permission` besides the route's own
 * ("date, time: <why> needs the 'calls:write' permission as well"), each field named in
 * `details.fields` as a 400 names its fields.
 */
export function needsPermissionToo(permission: Permission, fields: readonly string[], why: string): ApiError {
  return new ApiError(403, "forbidden", `${fields.join(", ")}: ${why} needs the '${permission}' permission as well`, {
    fields: fields.map((field) => ({ field, message: `needs ${permission}` })),
  });
}
