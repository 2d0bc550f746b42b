import { randomBytes } from "node:crypto";
import { PLANS, type Config, type Plan, type PlanLimits } from "../config.js";
import { newId, randomBase62 } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { hashToken } from "../core/token-hash.js";
import type { Db } from "../db/database.js";
import { AccountsRepository, type AccountRecord } from "../db/repositories/accounts.js";
import { LIVE_CALL_STATUSES } from "../db/repositories/calls.js";
import { LedgerRepository, type LedgerRecord } from "../db/repositories/ledger.js";
import type { CursorCodec } from "./cursor-codec.js";
import type { Outbox } from "./outbox.js";
import { listPage, type ListQuery } from "./list-page.js";

const MEDIA_TOKEN_PREFIX = "mt_";

export const LIMIT_KEYS = ["requestsPerMinute", "agents", "webhooks", "concurrentCalls", "queuedCalls"] as const satisfies readonly (keyof PlanLimits)[];

/** Accounts: plans, effective limits (plan defaults with per-account overrides), credits. */
export class AccountsService {
  private readonly accounts: AccountsRepository;
  private readonly ledger: LedgerRepository;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly cursors: CursorCodec,
    private readonly deps: { outbox: Outbox },
  ) {
    this.accounts = new AccountsRepository(db);
    this.ledger = new LedgerRepository(db);
  }

  async create(input: { name: string; plan: Plan; credits?: number }): Promise<AccountRecord> {
    if (!(PLANS as readonly string[]).includes(input.plan)) throw new Error(`plan must be one of ${PLANS.join(", ")}`);
    const at = nowIso();
    const account: AccountRecord = {
      id: newId("account"),
      name: input.name,
      plan: input.plan,
      credit_balance: 0,
      signing_secret: "whsec_" + randomBytes(24).toString("hex"),
      // No media token until the account makes one (POST /v1/account/media-token/rotate).
      media_token_hash: null,
      media_token_created_at: null,
      limit_overrides: {},
      low_balance_threshold: null,
      retention_days: null,
      created_at: at,
      updated_at: at,
    };
    await this.accounts.insert(account);
    if (input.credits && input.credits > 0) {
      account.credit_balance = await this.addCredits(account.id, input.credits, "initial credits");
    }
    return account;
  }

  find(id: string, db?: Db): Promise<AccountRecord | undefined> {
    return this.accounts.findById(id, db);
  }

  /**
   * Makes a new media token for the account, replacing (and so refusing from now on) the
   * previous one. The token is returned this once; only its hash is kept.
   */
  async rotateMediaToken(accountId: string): Promise<{ media_token: string; media_token_created_at: string }> {
    const token = MEDIA_TOKEN_PREFIX + randomBase62(32);
    const at = nowIso();
    await this.accounts.setMediaToken(accountId, hashToken(token), at);
    return { media_token: token, media_token_created_at: at };
  }

  /** The account whose media token this is (`/media/twilio`); none for an empty or unknown token. */
  findByMediaToken(token: string): Promise<AccountRecord | undefined> {
    if (!token) return Promise.resolve(undefined);
    return this.accounts.findByMediaTokenHash(hashToken(token));
  }

  list(): Promise<AccountRecord[]> {
    return this.accounts.list();
  }

  /** How many accounts the installation has. */
  async count(): Promise<number> {
    const row = await this.db.selectFrom("accounts").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  limitsOf(account: Pick<AccountRecord, "plan" | "limit_overrides">): PlanLimits {
    return { ...this.config.plans[account.plan], ...account.limit_overrides };
  }

  /** Sets (or with null clears) per-account overrides of plan limits. */
  async setLimits(accountId: string, overrides: Partial<Record<keyof PlanLimits, number | null>>): Promise<PlanLimits> {
    const account = await this.accounts.findById(accountId);
    if (!account) throw new Error(`no account ${accountId}`);
    const next: Partial<PlanLimits> = { ...account.limit_overrides };
    for (const [k, v] of Object.entries(overrides) as [keyof PlanLimits, number | null][]) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    await this.accounts.update(accountId, { limit_overrides: next }, nowIso());
    return this.limitsOf({ plan: account.plan, limit_overrides: next });
  }

  async setPlan(accountId: string, plan: Plan): Promise<void> {
    await this.accounts.update(accountId, { plan }, nowIso());
  }

  /** What the account holds now, to compare with its limits. */
  async usage(accountId: string): Promise<AccountUsage> {
    const count = (n: { n: number | string | bigint } | undefined) => Number(n?.n ?? 0);
    const [agents, webhooks, live, queued] = await Promise.all([
      this.db.selectFrom("agents").select((eb) => eb.fn.countAll().as("n")).where("account_id", "=", accountId).where("deleted_at", "is", null).executeTakeFirst(),
      this.db.selectFrom("webhooks").select((eb) => eb.fn.countAll().as("n")).where("account_id", "=", accountId).executeTakeFirst(),
      this.db.selectFrom("calls").select((eb) => eb.fn.countAll().as("n")).where("account_id", "=", accountId).where("status", "in", LIVE_CALL_STATUSES).executeTakeFirst(),
      this.db.selectFrom("calls").select((eb) => eb.fn.countAll().as("n")).where("account_id", "=", accountId).where("status", "=", "queued").executeTakeFirst(),
    ]);
    return { agents: count(agents), webhooks: count(webhooks), concurrent_calls: count(live), queued_calls: count(queued) };
  }

  ledgerPage(accountId: string, query: ListQuery) {
    return listPage({
      codec: this.cursors,
      list: "ledger",
      filters: {},
      query,
      fetch: (page) => this.ledger.page(accountId, page),
      count: () => this.ledger.count(accountId),
      present: (row: LedgerRecord) => row,
    });
  }

  /** Where `credits.low` fires for this account: its own threshold, or the configured default. */
  lowBalanceThresholdOf(account: Pick<AccountRecord, "low_balance_threshold">): number {
    return account.low_balance_threshold ?? this.config.credits.lowBalanceThreshold;
  }

  /** Sets the account's own `credits.low` threshold (null: back to the configured default); returns the one in force. */
  async setLowBalanceThreshold(accountId: string, threshold: number | null): Promise<number> {
    await this.accounts.update(accountId, { low_balance_threshold: threshold }, nowIso());
    return this.lowBalanceThresholdOf({ low_balance_threshold: threshold });
  }

  /**
   * How many days this account's ended calls keep their content (see RetentionJob): its own
   * setting, else the configured default; null: for ever.
   */
  retentionDaysOf(account: Pick<AccountRecord, "retention_days">): number | null {
    const days = account.retention_days ?? this.config.retention.days;
    return days === 0 ? null : days;
  }

  /** Sets the account's own retention: days, 0 for ever, null back to the configured default; returns the one in force. */
  async setRetentionDays(accountId: string, days: number | null): Promise<number | null> {
    await this.accounts.update(accountId, { retention_days: days }, nowIso());
    return this.retentionDaysOf({ retention_days: days });
  }

  /**
   * Moves the balance by a ledger line (in `db`'s transaction, or its own) and returns the
   * balance after. A movement that takes it from at or above the account's threshold to below
   * it writes `credits.low` with it: once per crossing, not on every charge below.
   */
  async recordLedger(entry: Omit<LedgerRecord, "balance_after">, db: Db = this.db): Promise<number> {
    const run = async (trx: Db) => {
      const after = await this.ledger.record(entry, trx);
      if (entry.amount < 0) {
        const account = await this.accounts.findById(entry.account_id, trx);
        const threshold = account ? this.lowBalanceThresholdOf(account) : this.config.credits.lowBalanceThreshold;
        if (after - entry.amount >= threshold && after < threshold) {
          const data = { balance: after, threshold, call_id: entry.call_id };
          await this.deps.outbox.append([{ accountId: entry.account_id, name: "credits.low", data }], trx);
        }
      }
      return after;
    };
    return db.isTransaction ? run(db) : this.db.transaction().execute(run);
  }

  /** Adds (or with a negative amount removes) credits; returns the new balance. */
  addCredits(accountId: string, amount: number, description: string | null = null): Promise<number> {
    return this.recordLedger({
      id: newId("ledger"),
      account_id: accountId,
      amount,
      reason: amount >= 0 ? "grant" : "adjustment",
      call_id: null,
      description,
      created_at: nowIso(),
    });
  }
}

export interface AccountUsage {
  agents: number;
  webhooks: number;
  concurrent_calls: number;
  queued_calls: number;
}
