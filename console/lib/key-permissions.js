// What the signed-in key may do, as the API says (GET /v1/account/key, which any valid key may read).
import { api } from "./api.js";

/** A test of the key's permissions: `*` grants all, a `:write` permission includes its `:read`. */
export async function keyGrants() {
  const { permissions: held } = await api("GET", "/v1/account/key");
  return (permission) => held.includes("*") || held.includes(permission) || (permission.endsWith(":read") && held.includes(permission.replace(/:read$/, ":write")));
}
