import type { Db } from "../database.js";
import type { SecretTable } from "../schema.js";
import { literalLimit } from "../literal-limit.js";
import type { Page, PageRequest } from "./keyset.js";

/** What may be shown of a secret: never its value. */
export interface SecretSummary {
  name: string;
  created_at: string;
  updated_at: string;
}

/** A summary with the list's keyset columns: the name stands for the id (it is unique in the account). */
export interface SecretListRow extends SecretSummary {
  id: string;
}

/**
 * An account's secrets, one row per name. Every query is scoped to the account; only
 * `values` reads the value column, for the tools that send it (never for the API).
 */
export class SecretsRepository {
  constructor(private readonly db: Db) {}

  async find(accountId: string, name: string, db: Db = this.db): Promise<SecretSummary | undefined> {
    return db.selectFrom("secrets").select(["name", "created_at", "updated_at"]).where("account_id", "=", accountId).where("name", "=", name).executeTakeFirst();
  }

  async insert(row: SecretTable, db: Db = this.db): Promise<void> {
    await db.insertInto("secrets").values(row).execute();
  }

  async replace(accountId: string, name: string, value: string, updatedAt: string, db: Db = this.db): Promise<void> {
    await db.updateTable("secrets").set({ value, updated_at: updatedAt }).where("account_id", "=", accountId).where("name", "=", name).execute();
  }

  /** Removes the secret; false when the account has none of that name. */
  async delete(accountId: string, name: string, db: Db = this.db): Promise<boolean> {
    const result = await db.deleteFrom("secrets").where("account_id", "=", accountId).where("name", "=", name).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async count(accountId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectFrom("secrets").where("account_id", "=", accountId).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * A page of the account's secrets in `(created_at, name)` order, without their values: the
   * keyset of the other lists (keyset.ts) with the name in the id's place, read as one range
   * of the `(account_id, created_at, name)` index.
   */
  async page(accountId: string, page: PageRequest): Promise<Page<SecretListRow>> {
    let query = this.db.selectFrom("secrets").select(["name", "created_at", "updated_at"]).where("account_id", "=", accountId);
    const after = page.after;
    if (after) {
      const cmp = page.order === "asc" ? ">" : "<";
      query = query.where((eb) => eb(eb.refTuple("created_at", "name"), cmp, eb.tuple(after.createdAt, after.id)));
    }
    const rows = await query.orderBy("created_at", page.order).orderBy("name", page.order).limit(literalLimit(page.limit + 1)).execute();
    return { rows: rows.slice(0, page.limit).map((row) => ({ ...row, id: row.name })), hasMore: rows.length > page.limit };
  }

  /** The values of those of `names` the account has. */
  async values(accountId: string, names: readonly string[], db: Db = this.db): Promise<Array<{ name: string; value: string }>> {
    if (names.length === 0) return [];
    return db.selectFrom("secrets").select(["name", "value"]).where("account_id", "=", accountId).where("name", "in", [...names]).execute();
  }
}
