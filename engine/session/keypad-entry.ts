import type { Clock, TimerHandle } from "../audio/clock.js";
import type { CallEvent } from "../call-events.js";

/**
 * Keys pressed within this of each other are one entry ("4", "2" -> "42"); `#` ends an entry at
 * once. Long enough for a number typed at a normal pace, short enough that a single "1" is
 * answered without a noticeable wait.
 */
export const KEYPAD_GAP_MS = 1_000;
/** An entry is given to the dialogue once it is this long, whatever follows. */
export const MAX_KEYS = 32;
/**
 * Keys past this many in a second are dropped: a phone sends a dozen at most (each tone and
 * gap lasts 40 ms or more), and a client flooding key events must not turn each into a
 * dialogue turn.
 */
export const MAX_KEYS_PER_SECOND = 20;

/** A complete entry: its keys, when its first and last key came. */
export interface KeyEntry {
  keys: string;
  startedAt: number;
  lastKeyAt: number;
}

/** What keypad entry needs of the call it belongs to. */
export interface KeypadHost {
  /** The call is ending: keys are ignored. */
  isEnding(): boolean;
  /** The call is saying its closing line: keys are reported, not taken. */
  isClosing(): boolean;
  /** A `dtmf` event for each key taken, an `error` (recovered) when a flood is dropped. */
  report(event: Extract<CallEvent, { type: "dtmf" | "error" }>): void;
  /** A key was pressed at `atMs`: the agent stops at once (a key press is never a backchannel). */
  keyPressed(atMs: number): void;
  /** The keys pressed so far are the caller's turn (never empty). */
  entered(entry: KeyEntry): void;
}

/**
 * The caller's keys gathered into entries: an entry is complete KEYPAD_GAP_MS after its last
 * key, at `#`, or at MAX_KEYS keys. A flood past MAX_KEYS_PER_SECOND is dropped and reported.
 */
export class KeypadEntry {
  /** Keys pressed and not yet entered, since `startedAt`. */
  private keys = "";
  private startedAt = 0;
  private lastKeyAt = 0;
  private timer: TimerHandle | undefined;
  /** When the keys of the last second came (the flood guard). */
  private readonly recent: number[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly host: KeypadHost,
  ) {}

  /** A key the caller pressed. */
  press(digit: string): void {
    if (this.host.isEnding()) return;
    const now = this.clock.now();
    while (this.recent.length > 0 && this.recent[0]! <= now - 1000) this.recent.shift();
    if (this.recent.length >= MAX_KEYS_PER_SECOND) {
      // Said once a second at most: one more entry marks the flood as reported.
      if (this.recent.length === MAX_KEYS_PER_SECOND) {
        this.host.report({ type: "error", message: `keys dropped: more than ${MAX_KEYS_PER_SECOND} a second`, recovered: true });
        this.recent.push(now);
      }
      return;
    }
    this.recent.push(now);
    this.host.report({ type: "dtmf", digit });
    if (this.host.isClosing()) return;
    this.clearTimer();
    this.host.keyPressed(now);
    if (digit === "#") return this.take();
    if (this.keys === "") this.startedAt = now;
    this.keys += digit;
    this.lastKeyAt = now;
    if (this.keys.length >= MAX_KEYS) return this.take();
    this.timer = this.clock.setTimeout(() => this.take(), KEYPAD_GAP_MS);
  }

  /** The keys of an entry not yet complete, taken out (the call is ending: they are its last words). */
  takePending(): { keys: string; startedAt: number } | undefined {
    const keys = this.keys;
    this.keys = "";
    return keys ? { keys, startedAt: this.startedAt } : undefined;
  }

  /** No entry completes any more (the call is ending). */
  stop(): void {
    this.clearTimer();
  }

  private take(): void {
    const keys = this.keys;
    this.keys = "";
    this.timer = undefined;
    if (keys) this.host.entered({ keys, startedAt: this.startedAt, lastKeyAt: this.lastKeyAt });
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
