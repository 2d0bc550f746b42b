import { systemClock, type Clock, type TimerHandle } from "../../engine/index.js";
import type { CreditReservations } from "../services/credit-reservations.js";

/** Said before a call whose account's credit has run out is hung up. */
export const CREDIT_EXHAUSTED_LINE = "I'm sorry, I have to end the call now. Goodbye.";
/** How long before a call's next minute starts its credit is checked: time for the goodbye. */
export const CREDIT_CHECK_LEAD_MS = 15_000;
/**
 * How long before the uncovered minute starts the call is hung up at the latest. Durations
 * are billed in whole seconds (rounded) by started minute: stopping 2 s early keeps the
 * duration, and so the charge, inside the minutes covered.
 */
export const CREDIT_HANG_UP_MARGIN_MS = 2_000;
const MINUTE_MS = 60_000;
/** After a balance that could not be read: when to read it again, and the time a goodbye needs. */
const RETRY_MS = 2_000;
const GOODBYE_MS = 5_000;

export interface CreditWatchOptions {
  callId: string;
  /** The call's account: each next minute is reserved from its balance as stored then (it may have grown since the call started). */
  accountId: string;
  reservations: CreditReservations;
  /** The balance cannot cover the next minute: the call must be over within `withinMs`. */
  onExhausted: (withinMs: number) => void;
  /** A minute that could not be reserved (a database error): tried again every 2 s while a goodbye still fits before the minute. */
  onError?: (err: unknown) => void;
  clock?: Clock;
}

/**
 * Keeps a running call inside its account's credit. The call starts with its first minute
 * reserved (CreditReservations: a call holds it from the moment it is live);
 * CREDIT_CHECK_LEAD_MS before each further minute would start, that minute is reserved from the
 * balance as it is then, less what the account's other calls hold (on every node). When it cannot be, `onExhausted` asks for the call to end before the minute starts:
 * the caller hears a goodbye, and the account is charged only minutes it could pay for.
 */
export class CreditWatch {
  private readonly clock: Clock;
  private startedAt = 0;
  private timer: TimerHandle | undefined;
  private stopped = false;
  /** Minutes reserved for the call so far: its first, and each one reserved here. */
  private minutes = 1;

  constructor(private readonly options: CreditWatchOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** Starts watching as the call's time starts counting. */
  start(): void {
    this.startedAt = this.clock.now();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
  }

  private schedule(): void {
    const coveredUntil = this.minutes * MINUTE_MS;
    this.checkAt(this.startedAt + coveredUntil - CREDIT_CHECK_LEAD_MS, coveredUntil);
  }

  private checkAt(at: number, coveredUntil: number): void {
    this.timer = this.clock.setTimeout(() => void this.check(coveredUntil), at - this.clock.now());
  }

  private async check(coveredUntil: number): Promise<void> {
    if (this.stopped) return;
    let reserved = false;
    let unreadable = false;
    try {
      reserved = await this.options.reservations.tryReserveMinute(this.options.accountId, this.options.callId);
    } catch (err) {
      unreadable = true;
      this.options.onError?.(err);
    }
    if (this.stopped) return;
    if (reserved) {
      this.minutes += 1;
      return this.schedule();
    }
    const left = this.startedAt + coveredUntil - CREDIT_HANG_UP_MARGIN_MS - this.clock.now();
    // A database hiccup is not a reason to hang up yet: try again while a goodbye still fits.
    if (unreadable && left > RETRY_MS + GOODBYE_MS) return this.checkAt(this.clock.now() + RETRY_MS, coveredUntil);
    this.options.onExhausted(Math.max(0, left));
  }
}
