import type { Logger } from "pino";
import { ApiError } from "../core/api-error.js";
import type { Db } from "../db/database.js";
import { CallsRepository } from "../db/repositories/calls.js";
import type { AccountsService } from "./accounts.js";
import type { CallContentRemoval } from "./call-content-removal.js";
import { forgetExpiredWebCallTokens } from "./web-call-tokens.js";
import { forgetExpiredCarrierStreamTokens } from "./carrier-stream-tokens.js";

/** Calls read per query; each is then emptied in its own short transaction. */
const BATCH = 100;
const DAY_MS = 86_400_000;
/** How often expired web call tokens lose their context (they last 5 minutes). */
export const TOKEN_SWEEP_MS = 60_000;

export interface RetentionPass {
  /** Calls whose content was removed, by account (accounts with a retention, 0 included). */
  removed: Record<string, number>;
  total: number;
  /** Calls whose removal failed (logged each); they are tried again on the next pass. */
  failed: number;
}

/**
 * Removes the content (recording file, transcript, analysis, actions, context: exactly what
 * DELETE /v1/calls/{id} removes, through CallContentRemoval, so events are scrubbed the same
 * way and the billing record stays) of ended calls older than their account's retention
 * (AccountsService.retentionDaysOf: its own setting, else PARLEY_RETENTION_DAYS; none: kept).
 * Age is from the call's end. Live calls and calls whose analysis is still being written are
 * left for a later pass.
 *
 * Runs at start-up and then every `intervalMs` (a day), on an unref'd timer; one pass at a
 * time. A pass reads calls in batches and empties each in its own transaction, so the API goes
 * on between them, and the database's WAL once per batch (see CallContentRemoval); it ends
 * with one log line: the count per account and the total.
 *
 * Also, every minute and on each pass: expired web call tokens lose the context they carried
 * (forgetExpiredWebCallTokens), and the WAL is emptied after it; carrier stream tokens expired
 * over an hour ago are deleted (forgetExpiredCarrierStreamTokens).
 */
export class RetentionJob {
  private readonly calls: CallsRepository;
  private timer: NodeJS.Timeout | undefined;
  private tokenTimer: NodeJS.Timeout | undefined;
  private running: Promise<RetentionPass> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly settings: { intervalMs: number; now: () => number },
    private readonly deps: { accounts: AccountsService; callContent: CallContentRemoval; logger: Logger },
  ) {
    this.calls = new CallsRepository(db);
  }

  /** Runs a pass now, then every `intervalMs`. */
  start(): void {
    this.stopped = false;
    const pass = () => void this.run().catch((err: unknown) => this.deps.logger.error({ err }, "retention pass failed"));
    pass();
    this.timer = setInterval(pass, this.settings.intervalMs);
    this.timer.unref();
    this.tokenTimer = setInterval(() => void this.forgetExpiredTokens(), TOKEN_SWEEP_MS);
    this.tokenTimer.unref();
  }

  /** No more passes; resolves once the one under way has stopped (after the call it is on). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.tokenTimer);
    this.timer = undefined;
    this.tokenTimer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One pass over every account with a retention (joins the pass under way, if any). */
  run(): Promise<RetentionPass> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<RetentionPass> {
    const started = this.settings.now();
    const result: RetentionPass = { removed: {}, total: 0, failed: 0 };
    await this.forgetExpiredTokens();
    for (const account of await this.deps.accounts.list()) {
      const days = this.deps.accounts.retentionDaysOf(account);
      if (days === null || this.stopped) continue;
      const removed = await this.removeOlderThan(account.id, new Date(started - days * DAY_MS).toISOString(), result);
      result.removed[account.id] = removed;
      result.total += removed;
    }
    this.deps.logger.info(
      { retention: { removed: result.removed, total: result.total, failed: result.failed, ms: Math.round(this.settings.now() - started) } },
      `retention: removed the content of ${result.total} ended call${result.total === 1 ? "" : "s"}`,
    );
    return result;
  }

  /** Empties the context of expired web call tokens (then the WAL if any changed), and deletes old carrier stream tokens; a failure is logged, never thrown. */
  private async forgetExpiredTokens(): Promise<void> {
    try {
      await forgetExpiredCarrierStreamTokens(this.db, this.settings.now());
      if ((await forgetExpiredWebCallTokens(this.db, this.settings.now())) > 0) await this.deps.callContent.emptyWal();
    } catch (err) {
      this.deps.logger.error({ err }, "web call token sweep failed");
    }
  }

  private async removeOlderThan(accountId: string, before: string, result: RetentionPass): Promise<number> {
    let removed = 0;
    let after: { created_at: string; id: string } | null = null;
    while (!this.stopped) {
      const batch = await this.calls.endedWithContent(accountId, before, after, BATCH);
      for (const call of batch) {
        if (this.stopped) break;
        try {
          await this.deps.callContent.remove(accountId, call.id, { emptyWal: false });
          removed += 1;
        } catch (err) {
          // A call that changed since it was read (its analysis restarted) waits for the next pass.
          if (err instanceof ApiError && err.status === 409) continue;
          result.failed += 1;
          this.deps.logger.warn({ err, call_id: call.id, account_id: accountId }, "retention: the call's content was not removed; the next pass tries again");
        }
      }
      // What this batch removed leaves the WAL (if another process reads it, a retry follows).
      if (batch.length > 0) await this.deps.callContent.emptyWal();
      if (batch.length < BATCH) break;
      after = batch[batch.length - 1]!;
    }
    return removed;
  }
}
