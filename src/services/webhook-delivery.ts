import type { Logger } from "pino";
import PQueue from "p-queue";
import { ApiError } from "../core/api-error.js";
import { KeyedSlots, type Slot } from "../core/keyed-slots.js";
import { nowIso } from "../core/time.js";
import { onCommittedChange } from "../db/commit-notices.js";
import type { Db } from "../db/database.js";
import { AccountsRepository } from "../db/repositories/accounts.js";
import { DeliveriesRepository, type DeliveryRecord } from "../db/repositories/deliveries.js";
import { EventsRepository, type EventRecord } from "../db/repositories/events.js";
import { WebhooksRepository, type WebhookRecord } from "../db/repositories/webhooks.js";
import type { ParleyMetrics, WebhookAttemptResult } from "../observability/metrics.js";
import type { Outbox } from "./outbox.js";
import type { AttemptOutcome, WebhookSender } from "./webhook-sender.js";
import { WEBHOOK_HEADERS, webhookSignature } from "./webhook-signature.js";

/** The reference: a webhook is disabled after 10 consecutive failures (counted per attempt). */
export const DISABLE_AFTER_FAILURES = 10;

/**
 * Most manual attempts (test events, redeliveries) one account may have under way at once,
 * on top of the host and account places every attempt takes: each answers its HTTP request
 * only when the receiver does, so without a bound a key could keep as many requests open
 * towards any URL as it sends.
 */
export const MANUAL_ATTEMPTS_PER_ACCOUNT = 2;

/** How long past the attempt's timeout (which the worker enforces) a claimed delivery stays with its worker: a crashed worker's come back after it. */
const LEASE_MARGIN_MS = 5_000;
/**
 * Longest sleep between polls. Appends and finished attempts wake the worker; this catches
 * events written by another process (the admin CLI) and deliveries whose host was busy.
 */
const MAX_IDLE_MS = 5_000;
/** After a database error, poll again this much later. */
const ERROR_BACKOFF_MS = 1_000;

export interface DeliverySettings {
  timeoutMs: number;
  /** Waits before each retry; after the last, a delivery is `failed`. */
  retryScheduleMs: readonly number[];
  concurrency: number;
  hostConcurrency: number;
}

/** The checks a target URL passes before every attempt (scheme and address policy); throws with the reason. */
export type TargetCheck = (url: string) => Promise<URL>;

/** An attempt's outcome as the delivery log keeps it, with the delivery as it stands after. */
export interface AttemptResult {
  delivery: DeliveryRecord;
  outcome: AttemptOutcome;
}

/** The request body: the reference's envelope, plus the event's id and sequence number to deduplicate and order by. */
export function webhookEnvelope(event: EventRecord, delivery: Pick<DeliveryRecord, "event_name" | "webhook_id">): string {
  return JSON.stringify({
    event: delivery.event_name,
    timestamp: event.created_at,
    webhook_id: delivery.webhook_id,
    event_id: event.id,
    sequence: event.seq,
    data: event.data,
  });
}

function hostOf(url: string | null): string {
  try {
    return url ? new URL(url).host.toLowerCase() : "";
  } catch {
    return "";
  }
}

function isSuccess(outcome: AttemptOutcome): boolean {
  return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
}

/**
 * Delivers the outbox's deliveries: claims due ones with one conditional update (so several
 * workers, or a restarted one, never send a delivery twice at once), sends each with a bound
 * overall, per receiver host (a slow receiver holds back no other) and per account (one
 * tenant cannot take every place), and writes each
 * attempt's outcome with the delivery's next state and its webhook's status in one
 * transaction. Durable state is in the database; the queue only bounds concurrency.
 */
export class WebhookDeliveryWorker {
  private readonly deliveries: DeliveriesRepository;
  private readonly events: EventsRepository;
  private readonly webhooks: WebhooksRepository;
  private readonly accounts: AccountsRepository;
  private readonly queue: PQueue;
  private readonly byHost: KeyedSlots;
  private readonly byAccount: KeyedSlots;
  /** Manual attempts under way per account (see MANUAL_ATTEMPTS_PER_ACCOUNT). */
  private readonly manualByAccount = new KeyedSlots(Number.MAX_SAFE_INTEGER);
  /** Receivers with attempts under way, with the host and account those hold places of. */
  private readonly inFlightReceivers = new Map<string, { host: string; accountId: string; count: number }>();
  private readonly running = new Set<Promise<void>>();
  private started = false;
  private stopped = false;
  private currentPoll: Promise<void> | undefined;
  private pollAgain = false;
  private wakeQueued = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;

  constructor(
    private readonly db: Db,
    private readonly deps: { outbox: Outbox; sender: WebhookSender; checkTarget: TargetCheck; settings: DeliverySettings; logger: Logger; metrics: ParleyMetrics },
  ) {
    this.deliveries = new DeliveriesRepository(db);
    this.events = new EventsRepository(db);
    this.webhooks = new WebhooksRepository(db);
    this.accounts = new AccountsRepository(db);
    this.queue = new PQueue({ concurrency: deps.settings.concurrency });
    this.byHost = new KeyedSlots(deps.settings.concurrency);
    this.byAccount = new KeyedSlots(deps.settings.concurrency);
    deps.outbox.onAppend(() => this.wake());
  }

  /** Starts delivering: what is due now (pending retries of a previous run included), then as events come. */
  start(): void {
    this.started = true;
    // On PostgreSQL the outbox's wake-up comes before the commit, and this worker's own
    // connection would find nothing yet: the commit notice wakes it again (other nodes' too).
    onCommittedChange(this.db, "deliveries", () => this.wake());
    this.wake();
  }

  /** Looks for due deliveries soon (on SQLite after the current transaction, whose reads wait for it). */
  wake(): void {
    if (!this.started || this.stopped || this.wakeQueued) return;
    this.wakeQueued = true;
    setImmediate(() => {
      this.wakeQueued = false;
      void this.poll();
    });
  }

  /** Claims nothing more and waits for the attempts in flight (each ends within its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // A poll under way may still start what it has claimed: wait for it, then for those.
    await this.currentPoll;
    await Promise.allSettled([...this.running]);
    await this.deps.sender.close();
  }

  /** Attempts under way now. */
  get inFlight(): number {
    return this.running.size;
  }

  /** How long a claimed delivery stays with this worker. */
  get leaseMs(): number {
    return this.deps.settings.timeoutMs + LEASE_MARGIN_MS;
  }

  /**
   * One attempt now, outside the schedule (a test event, a redelivery) of the delivery `claim`
   * makes or claims: logged like any other, but it neither schedules retries nor moves the
   * webhook's status. It takes the places a scheduled attempt to `targetUrl` would (its host's,
   * its account's, within the overall bound) and one of the account's
   * MANUAL_ATTEMPTS_PER_ACCOUNT. When one is full it is refused with 429 `rate_limit_exceeded`
   * before `claim` runs, so a refused attempt leaves no row behind: refused at once rather than
   * waiting, as a wait would hold the caller's request (and a connection) open for as long as
   * the receivers hanging ahead of it.
   */
  async attemptNow(accountId: string, targetUrl: string, claim: () => Promise<DeliveryRecord>): Promise<AttemptResult> {
    const host = hostOf(targetUrl);
    const slots = this.takeManualSlots(accountId, host);
    let delivery: DeliveryRecord;
    try {
      delivery = await claim();
    } catch (err) {
      for (const slot of slots) slot.release();
      this.wake();
      throw err;
    }
    return this.inPlaces(delivery, slots, { host, accountId }, () => this.attempt(delivery, "manual"));
  }

  private poll(): Promise<void> {
    if (this.currentPoll) {
      this.pollAgain = true;
      return this.currentPoll;
    }
    this.currentPoll = this.pollLoop().finally(() => {
      this.currentPoll = undefined;
      // Asked for between the loop's last look and now.
      if (this.pollAgain) this.wake();
    });
    return this.currentPoll;
  }

  private async pollLoop(): Promise<void> {
    try {
      // A wake-up during any await here sets pollAgain: the loop looks once more before sleeping.
      do {
        this.pollAgain = false;
        const lookedAt = await this.claimAndStart();
        if (!this.pollAgain) await this.sleepUntilNextDue(lookedAt);
      } while (this.pollAgain && !this.stopped);
    } catch (err) {
      if (this.stopped) return;
      this.deps.logger.error({ err }, "webhook delivery: polling failed; trying again shortly");
      this.schedule(ERROR_BACKOFF_MS);
    }
  }

  /**
   * Starts what is due and may start now. Returns the time it looked for due work at (what was
   * due then and is not started waits for a place), or undefined when it had no place to fill.
   */
  private async claimAndStart(): Promise<number | undefined> {
    const free = this.deps.settings.concurrency - this.running.size;
    if (this.stopped || free <= 0) return undefined;
    const now = Date.now();
    const due = await this.deliveries.due(now, this.busyReceivers(), Math.max(free * 4, 100));
    const chosen = new Map<string, Slot[]>();
    for (const candidate of due) {
      if (chosen.size >= free) break;
      const slots = this.takeSlots(candidate.accountId, hostOf(candidate.targetUrl));
      if (slots) chosen.set(candidate.id, slots);
    }
    const claimed = await this.deliveries.claim([...chosen.keys()], now, now + this.leaseMs, nowIso());
    for (const delivery of claimed) {
      const candidate = due.find((d) => d.id === delivery.id)!;
      this.launch(delivery, chosen.get(delivery.id)!, { host: hostOf(candidate.targetUrl), accountId: candidate.accountId });
      chosen.delete(delivery.id);
    }
    // Claimed by another worker meanwhile: their places are free again.
    for (const slots of chosen.values()) for (const slot of slots) slot.release();
    // A full window may hide more due work behind it.
    if (claimed.length > 0 && claimed.length === free) this.pollAgain = true;
    return now;
  }

  /** Receivers with attempts under way whose host or account has no place left: nothing more of theirs can start now. */
  private busyReceivers(): string[] {
    const busy: string[] = [];
    const accountCap = this.accountCap;
    for (const [receiver, where] of this.inFlightReceivers) {
      if (this.byHost.held(where.host) >= this.deps.settings.hostConcurrency || this.byAccount.held(where.accountId) >= accountCap) busy.push(receiver);
    }
    return busy;
  }

  /** Most attempts of one account under way at once: half the worker's places. */
  private get accountCap(): number {
    return Math.max(1, Math.floor(this.deps.settings.concurrency / 2));
  }

  /**
   * Places for one attempt: one of its host's (a slow receiver holds at most that many) and
   * one of its account's (at most half the worker, so one tenant's receivers, however many
   * hang, leave the other tenants room). Undefined when either is full.
   */
  private takeSlots(accountId: string, host: string): Slot[] | undefined {
    const hostSlot = this.byHost.take(host, this.deps.settings.hostConcurrency);
    if (!("release" in hostSlot)) return undefined;
    const accountSlot = this.byAccount.take(accountId, this.accountCap);
    if (!("release" in accountSlot)) {
      hostSlot.release();
      return undefined;
    }
    return [hostSlot, accountSlot];
  }

  /**
   * A manual attempt's places: one of the account's manual ones, then its host's and account's
   * as takeSlots gives them. Throws the 429 when any is full (nothing taken then).
   */
  private takeManualSlots(accountId: string, host: string): Slot[] {
    const manual = this.manualByAccount.take(accountId, MANUAL_ATTEMPTS_PER_ACCOUNT);
    const slots = "release" in manual ? this.takeSlots(accountId, host) : undefined;
    if ("release" in manual && slots) return [manual, ...slots];
    if ("release" in manual) manual.release();
    // A place frees when an attempt under way ends, at the latest at its timeout.
    const retryAfter = Math.max(1, Math.ceil(this.deps.settings.timeoutMs / 1000));
    const why =
      "release" in manual
        ? "this receiver's host or this account has as many webhook attempts under way as it may"
        : `this account has ${MANUAL_ATTEMPTS_PER_ACCOUNT} test events or redeliveries under way, the most it may`;
    throw new ApiError(429, "rate_limit_exceeded", `Not sent: ${why}; retry in ${retryAfter} s`, undefined, { "Retry-After": String(retryAfter) });
  }

  private launch(delivery: DeliveryRecord, slots: Slot[], where: { host: string; accountId: string }): void {
    this.inPlaces(delivery, slots, where, () => this.attempt(delivery, "scheduled")).catch((err: unknown) =>
      this.deps.logger.error({ err, delivery_id: delivery.id }, "webhook delivery: attempt could not be recorded; it is retried when its claim runs out"),
    );
  }

  /**
   * Runs an attempt holding `slots`, counted among the attempts under way (which stop waits
   * for) and its receiver among the busy ones; at its end the places are given back and the
   * worker looks for what waited for them.
   */
  private inPlaces<T>(delivery: DeliveryRecord, slots: Slot[], where: { host: string; accountId: string }, work: () => Promise<T>): Promise<T> {
    const tracked = this.inFlightReceivers.get(delivery.receiver) ?? { ...where, count: 0 };
    tracked.count += 1;
    this.inFlightReceivers.set(delivery.receiver, tracked);
    const result = this.queue.add(work);
    const settled: Promise<void> = result
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        for (const slot of slots) slot.release();
        if (--tracked.count === 0) this.inFlightReceivers.delete(delivery.receiver);
        this.running.delete(settled);
        this.wake();
      });
    this.running.add(settled);
    return result;
  }

  /**
   * Sleeps until the next delivery falls due. One that fell due after the last look is looked
   * at again at once; one that was due then but not started waits for a place, and a finishing
   * attempt wakes the worker for it.
   */
  private async sleepUntilNextDue(lookedAt: number | undefined): Promise<void> {
    if (this.stopped) return;
    // While attempts are under way, each wakes the worker as it ends and sets the timer for its retry.
    if (this.running.size > 0) return;
    const next = await this.deliveries.nextDueAt();
    const waitingForPlace = next !== undefined && (lookedAt === undefined || next <= lookedAt);
    const delay = next === undefined || waitingForPlace ? MAX_IDLE_MS : next - Date.now();
    if (delay <= 0) this.pollAgain = true;
    else this.schedule(Math.min(delay, MAX_IDLE_MS));
  }

  /** Polls at `at` (ms since the epoch) unless a poll is set for sooner. */
  private scheduleAt(at: number): void {
    if (this.timer && this.timerAt <= at) return;
    this.schedule(Math.max(0, Math.min(at - Date.now(), MAX_IDLE_MS)));
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timerAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, delayMs);
    this.timer.unref();
  }

  private async attempt(delivery: DeliveryRecord, mode: "scheduled" | "manual"): Promise<AttemptResult> {
    const event = await this.events.findById(delivery.event_id);
    const webhook = delivery.webhook_id ? await this.webhooks.findById(delivery.webhook_id) : undefined;
    const target = delivery.webhook_id ? webhook?.url : delivery.url;
    if (!event || target === undefined || target === null || (mode === "scheduled" && webhook?.status === "inactive")) {
      // Disabled or deleted since the event: not sent (the webhook's re-enabling does not bring it back).
      const at = nowIso();
      const patch = { status: "skipped" as const, next_attempt_at: null, lease_until: null, updated_at: at, completed_at: at };
      await this.deliveries.update(delivery.id, patch);
      this.deps.metrics.webhookAttempt("not_sent", "skipped", null);
      return { delivery: { ...delivery, ...patch }, outcome: { statusCode: null, error: "not sent: the webhook is disabled or deleted", responseBody: null, durationMs: 0, retryAfterMs: null } };
    }
    const secret = webhook ? webhook.secret : (await this.accounts.findById(delivery.account_id))?.signing_secret;
    const body = webhookEnvelope(event, delivery);
    const startedAt = nowIso();
    let outcome: AttemptOutcome;
    let sent = false;
    try {
      const url = await this.deps.checkTarget(target);
      sent = true;
      outcome = await this.deps.sender.send(url, body, {
        [WEBHOOK_HEADERS.event]: delivery.event_name,
        [WEBHOOK_HEADERS.delivery]: delivery.id,
        [WEBHOOK_HEADERS.signature]: webhookSignature(secret ?? "", body, Math.floor(Date.now() / 1000)),
      });
    } catch (err) {
      // Refused before any connection: the URL or its address is not allowed (any more).
      outcome = { statusCode: null, error: `not sent: ${(err as Error).message}`, responseBody: null, durationMs: 0, retryAfterMs: null };
    }
    const patch = this.nextState(delivery, outcome, mode);
    await this.db.transaction().execute(async (trx) => {
      const kept = await this.deliveries.settle(
        {
          delivery_id: delivery.id,
          number: delivery.attempt_count,
          started_at: startedAt,
          duration_ms: outcome.durationMs,
          status_code: outcome.statusCode,
          error: outcome.error,
          response_body: outcome.responseBody,
        },
        patch,
        trx,
      );
      if (kept && mode === "scheduled" && webhook) await this.moveWebhookStatus(webhook, outcome, trx);
    });
    if (patch.status === "pending" && patch.next_attempt_at) this.scheduleAt(patch.next_attempt_at);
    this.count(outcome, sent, patch.status, event.created_at);
    this.logAttempt(delivery, outcome, patch);
    return { delivery: { ...delivery, ...patch }, outcome };
  }

  /**
   * One line per attempt: delivered at debug, failed at warn (with when it is tried again, or
   * `status: failed` when it is not). The receiver's URL is not in it: it may carry a credential.
   */
  private logAttempt(delivery: DeliveryRecord, outcome: AttemptOutcome, patch: Partial<DeliveryRecord>): void {
    const fields = {
      delivery_id: delivery.id,
      webhook_id: delivery.webhook_id ?? undefined,
      account_id: delivery.account_id,
      event: delivery.event_name,
      attempt: delivery.attempt_count,
      status_code: outcome.statusCode,
      duration_ms: outcome.durationMs,
      status: patch.status,
    };
    if (isSuccess(outcome)) this.deps.logger.debug(fields, "webhook delivered");
    else this.deps.logger.warn({ ...fields, error: outcome.error, retry_at: patch.next_attempt_at ? new Date(patch.next_attempt_at).toISOString() : undefined }, "webhook delivery failed");
  }

  /** The attempt in the metrics: its result, its delivery's final state if it has one, and the event's age when delivered. */
  private count(outcome: AttemptOutcome, sent: boolean, status: DeliveryRecord["status"] | undefined, eventCreatedAt: string): void {
    const result: WebhookAttemptResult = isSuccess(outcome) ? "success" : outcome.statusCode !== null ? "http_error" : sent ? "no_response" : "not_sent";
    const final = status === "delivered" || status === "failed" || status === "skipped" ? status : null;
    this.deps.metrics.webhookAttempt(result, final, final === "delivered" ? (Date.now() - Date.parse(eventCreatedAt)) / 1000 : null);
  }

  /** Delivered, a retry after the schedule's wait (a longer Retry-After within its bounds), or failed. */
  private nextState(delivery: DeliveryRecord, outcome: AttemptOutcome, mode: "scheduled" | "manual"): Partial<DeliveryRecord> {
    const at = nowIso();
    const final = { next_attempt_at: null, lease_until: null, updated_at: at, completed_at: at };
    if (isSuccess(outcome)) return { status: "delivered", ...final };
    const schedule = this.deps.settings.retryScheduleMs;
    const retriesUsed = delivery.attempt_count - 1;
    if (mode === "manual" || outcome.statusCode === 410 || retriesUsed >= schedule.length) return { status: "failed", ...final };
    let wait = schedule[retriesUsed]!;
    if (outcome.retryAfterMs !== null) wait = Math.max(wait, Math.min(outcome.retryAfterMs, Math.max(...schedule)));
    return { status: "pending", next_attempt_at: Date.now() + wait, lease_until: null, updated_at: at };
  }

  private async moveWebhookStatus(webhook: WebhookRecord, outcome: AttemptOutcome, trx: Db): Promise<void> {
    const at = nowIso();
    if (isSuccess(outcome)) {
      // The common case, an active webhook with no failures counted, has nothing to change.
      if (webhook.status !== "active" || webhook.consecutive_failures > 0) await this.webhooks.recordSuccess(webhook.id, at, trx);
      return;
    }
    const status = await this.webhooks.recordFailure(webhook.id, outcome.statusCode === 410, DISABLE_AFTER_FAILURES, at, trx);
    if (status === "inactive") {
      await this.deliveries.skipPending(webhook.id, at, trx);
      if (webhook.status !== "inactive") {
        this.deps.logger.warn({ webhook_id: webhook.id, account_id: webhook.account_id, gone: outcome.statusCode === 410 }, "webhook disabled after failed deliveries");
      }
    }
  }
}
