import type { AccountRecord } from "../db/repositories/accounts.js";

/** Who is calling: the key's account and what the key may do. */
export interface AuthContext {
  account: AccountRecord;
  keyId: string;
  permissions: readonly string[];
}
