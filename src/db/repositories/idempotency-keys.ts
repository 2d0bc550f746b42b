import type { Db } from "../database.js";
import type { IdempotencyTable } from "../schema.js";

export type IdempotencyRecord = IdempotencyTable;

/** Stored responses are replayed for 24 hours, then forgotten. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface IdempotencyScope {
  account_id: string;
  method: string;
  path: string;
  idempotency_key: string;
}

export class IdempotencyKeysRepository {
  constructor(private readonly db: Db) {}

  /** Claims the key for a new request; false when a row for it already exists. */
  async claim(scope: IdempotencyScope, bodyHash: string, at: string): Promise<boolean> {
    const result = await this.db
      .insertInto("idempotency_keys")
      .values({ ...scope, body_hash: bodyHash, state: "running", status_code: null, response_body: null, created_at: at })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  find(scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    return this.db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("account_id", "=", scope.account_id)
      .where("method", "=", scope.method)
      .where("path", "=", scope.path)
      .where("idempotency_key", "=", scope.idempotency_key)
      .executeTakeFirst();
  }

  /** Stores the final response; `sealedSecrets` holds its secret fields, encrypted (see http/idempotency-secrets.ts). */
  async complete(scope: IdempotencyScope, statusCode: number, responseBody: string, sealedSecrets: string | null = null): Promise<void> {
    await this.where(
      this.db.updateTable("idempotency_keys").set({ state: "done", status_code: statusCode, response_body: responseBody, sealed_secrets: sealedSecrets }),
      scope,
    ).execute();
  }

  async release(scope: IdempotencyScope): Promise<void> {
    await this.where(this.db.deleteFrom("idempotency_keys"), scope).execute();
  }

  async deleteOlderThan(cutoff: string): Promise<void> {
    await this.db.deleteFrom("idempotency_keys").where("created_at", "<", cutoff).execute();
  }

  private where<Q extends { where: (...args: never[]) => unknown }>(q: Q, scope: IdempotencyScope): Q {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const b = q as any;
    return b
      .where("account_id", "=", scope.account_id)
      .where("method", "=", scope.method)
      .where("path", "=", scope.path)
      .where("idempotency_key", "=", scope.idempotency_key) as Q;
  }
}
