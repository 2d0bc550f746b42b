import { ApiError } from "../core/api-error.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import type { Db } from "../db/database.js";
import { SecretsRepository, type SecretListRow, type SecretSummary } from "../db/repositories/secrets.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";

/** A secret's name: what `{{secrets.NAME}}` refers to. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** A value's length bounds, in characters. */
export const SECRET_VALUE_MAX = 4096;
/** Secrets one account may hold (a fixed bound, not a plan's: a tool needs a few). */
export const SECRET_LIMIT = 100;

/**
 * An account's secrets (issue 31): values its custom HTTP tools send in headers or sign their
 * requests with. Write-only through the API: `put`, `list` and `delete` show names and
 * timestamps, never a value; only `resolve`, for the tools, reads values. Writes emit no
 * event (as webhooks' and the do-not-call list's do not), so no value can reach a delivery.
 */
export class SecretsService {
  private readonly secrets: SecretsRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { cursors: CursorCodec },
  ) {
    this.secrets = new SecretsRepository(db);
  }

  /**
   * Creates the secret, or replaces the value of the one of that name (`created` false; its
   * `created_at` stays, its `updated_at` moves on). Only a new name counts towards SECRET_LIMIT:
   * counted and inserted under the account's lock, so two requests cannot both take the last slot.
   */
  async put(accountId: string, name: string, value: string): Promise<{ secret: SecretSummary; created: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      await holdAccountLock(trx, accountId);
      const current = await this.secrets.find(accountId, name, trx);
      if (current) {
        const updatedAt = nextUpdatedAt(current.updated_at);
        await this.secrets.replace(accountId, name, value, updatedAt, trx);
        return { secret: { ...current, updated_at: updatedAt }, created: false };
      }
      if ((await this.secrets.count(accountId, trx)) >= SECRET_LIMIT) {
        throw new ApiError(409, "secret_limit_reached", `An account holds at most ${SECRET_LIMIT} secrets; delete one first`);
      }
      const at = nowIso();
      await this.secrets.insert({ account_id: accountId, name, value, created_at: at, updated_at: at }, trx);
      return { secret: { name, created_at: at, updated_at: at }, created: true };
    });
  }

  /** The account's secrets, names and timestamps only, paginated as every list. */
  list(accountId: string, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "secrets",
      filters: {},
      query,
      fetch: (page) => this.secrets.page(accountId, page),
      count: () => this.secrets.count(accountId),
      present: ({ name, created_at, updated_at }: SecretListRow): SecretSummary => ({ name, created_at, updated_at }),
    });
  }

  /** Deletes the secret (its bytes zeroed in the file: secure_delete); 404 `secret_not_found` when the account has none of that name. */
  async delete(accountId: string, name: string): Promise<void> {
    if (!(await this.secrets.delete(accountId, name))) throw new ApiError(404, "secret_not_found", `No secret named ${name}`);
  }

  /**
   * The values of those of `names` the account has, by name (a name it lacks is absent). For
   * the tools that send them; never reachable from the API.
   */
  async resolve(accountId: string, names: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.secrets.values(accountId, [...new Set(names)]);
    return new Map(rows.map((row) => [row.name, row.value]));
  }
}
