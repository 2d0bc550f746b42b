import { ApiError } from "../core/api-error.js";
import { newId, randomBase62 } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { hashToken } from "../core/token-hash.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { ApiKeysRepository, type ApiKeyRecord } from "../db/repositories/api-keys.js";
import type { Db } from "../db/database.js";
import { databaseGeneration } from "../db/database-generation.js";
import { UnchangedDatabaseCache } from "../db/unchanged-database-cache.js";
import { isPermission, PERMISSIONS } from "./permissions.js";

const KEY_PREFIX = "sk_parley_";
/** last_used_at is refreshed at most this often, so reads do not each cost a write. */
const TOUCH_INTERVAL_MS = 60_000;
/** Keys whose lookup is kept at most (the cache empties at any write anyway). */
const KNOWN_KEYS = 10_000;

export interface CreatedApiKey {
  id: string;
  key: string;
  name: string;
  permissions: string[];
  account_id: string;
  created_at: string;
}

/** API keys: created once (the key is shown then and only its hash kept), listed, revoked. */
export class ApiKeysService {
  private readonly keys: ApiKeysRepository;
  /**
   * Each key's row and account as last read, by key hash, kept only while the database is
   * unchanged (any write, here or by another process, empties it): a revoked key, a new plan
   * or balance is read afresh. Every request authenticates, most with a key already seen.
   */
  private readonly known: UnchangedDatabaseCache<string, { key: ApiKeyRecord; account: AccountRecord }> | undefined;

  constructor(db: Db) {
    this.keys = new ApiKeysRepository(db);
    const generation = databaseGeneration(db);
    this.known = generation && new UnchangedDatabaseCache(generation, KNOWN_KEYS);
  }

  async create(accountId: string, name: string, permissions: string[] = ["*"]): Promise<CreatedApiKey> {
    const bad = permissions.filter((p) => !isPermission(p));
    if (bad.length > 0) throw new Error(`unknown permission ${bad.join(", ")}; known: *, ${PERMISSIONS.join(", ")}`);
    if (permissions.length === 0) throw new Error("a key needs at least one permission");
    const key = KEY_PREFIX + randomBase62(40);
    const record: ApiKeyRecord = {
      id: newId("apiKey"),
      account_id: accountId,
      name,
      key_hash: hashToken(key),
      key_prefix: key.slice(0, KEY_PREFIX.length + 6),
      permissions: [...new Set(permissions)],
      created_at: nowIso(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.keys.insert(record);
    return { id: record.id, key, name, permissions: record.permissions, account_id: accountId, created_at: record.created_at };
  }

  /** The key with this id (the caller's own: see GET /v1/account/key). */
  async get(keyId: string): Promise<ApiKeyRecord | undefined> {
    return this.keys.findById(keyId);
  }

  list(accountId: string): Promise<ApiKeyRecord[]> {
    return this.keys.listByAccount(accountId);
  }

  /** Revokes a key; false when no such key exists. */
  async revoke(keyId: string): Promise<boolean> {
    const key = await this.keys.findById(keyId);
    if (!key) return false;
    await this.keys.revoke(keyId, nowIso());
    return true;
  }

  /** Resolves a bearer key to its account, or throws 401 `invalid_api_key`. */
  async authenticate(presented: string | undefined): Promise<{ key: ApiKeyRecord; account: AccountRecord }> {
    if (!presented) {
      throw new ApiError(401, "invalid_api_key", "Missing API key: send it as 'Authorization: Bearer <key>'");
    }
    const hash = hashToken(presented);
    const found = this.known ? await this.known.get(hash, () => this.keys.findByHashWithAccount(hash)) : await this.keys.findByHashWithAccount(hash);
    if (!found) throw new ApiError(401, "invalid_api_key", "Invalid API key");
    if (found.key.revoked_at !== null) throw new ApiError(401, "invalid_api_key", "This API key has been revoked");
    const now = Date.now();
    if (found.key.last_used_at === null || now - Date.parse(found.key.last_used_at) > TOUCH_INTERVAL_MS) {
      await this.keys.touch(found.key.id, new Date(now).toISOString());
    }
    return found;
  }
}
