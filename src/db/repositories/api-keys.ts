import type { Db } from "../database.js";
import type { ApiKeyTable } from "../schema.js";
import { accountFromRow, type AccountRecord } from "./accounts.js";
import { parseJson, toJson } from "./json-column.js";

export interface ApiKeyRecord extends Omit<ApiKeyTable, "permissions"> {
  permissions: string[];
}

function toRecord(row: ApiKeyTable): ApiKeyRecord {
  return { ...row, permissions: parseJson<string[]>(row.permissions) ?? [] };
}

export class ApiKeysRepository {
  constructor(private readonly db: Db) {}

  async insert(record: ApiKeyRecord): Promise<void> {
    await this.db.insertInto("api_keys").values({ ...record, permissions: toJson(record.permissions) }).execute();
  }

  /** The key with this hash and its account, in one query (every request runs it). */
  async findByHashWithAccount(keyHash: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | undefined> {
    const row = await this.db
      .selectFrom("api_keys")
      .innerJoin("accounts", "accounts.id", "api_keys.account_id")
      .selectAll("accounts")
      .select([
        "api_keys.id as key_id",
        "api_keys.name as key_name",
        "api_keys.key_hash",
        "api_keys.key_prefix",
        "api_keys.permissions",
        "api_keys.created_at as key_created_at",
        "api_keys.last_used_at",
        "api_keys.revoked_at",
      ])
      .where("api_keys.key_hash", "=", keyHash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { key_id, key_name, key_hash, key_prefix, permissions, key_created_at, last_used_at, revoked_at, ...account } = row;
    return {
      key: toRecord({
        id: key_id,
        account_id: account.id,
        name: key_name,
        key_hash,
        key_prefix,
        permissions,
        created_at: key_created_at,
        last_used_at,
        revoked_at,
      }),
      account: accountFromRow(account),
    };
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(toRecord);
  }

  async revoke(id: string, at: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ revoked_at: at }).where("id", "=", id).where("revoked_at", "is", null).execute();
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", id).execute();
  }
}
