import { hash } from "node:crypto";

/**
 * How credentials given to clients (API keys, media tokens) are stored: the SHA-256 hex of the
 * token, looked up by that hash. The tokens are long and random, so a fast hash is enough (no
 * slow password KDF), and the lookup by hash compares no secret in the process.
 */
export function hashToken(token: string): string {
  // The one-shot hash: every request hashes its key, and a Hash object per call costs more than the hashing.
  return hash("sha256", token, "hex");
}
