import { isRetryable, type ProviderStage } from "./provider-error.js";

/** How long a provider that failed is passed over by later requests (of every call), before it is tried first again. */
export const DEFAULT_COOLDOWN_MS = 30_000;
/** How long a request waits for a provider's first output before the next provider serves it. */
export const DEFAULT_FIRST_OUTPUT_TIMEOUT_MS = 5_000;

/** A request moved from one provider of a chain to the next. */
export interface ProviderSwitch {
  stage: ProviderStage;
  from: string;
  to: string;
  /** `error`: it failed retryably (after its own retries); `timeout`: no first output in time. */
  reason: "error" | "timeout";
}

export interface ProviderChainOptions {
  /** Told of every switch (the engine logs and counts them). */
  onSwitch?: (change: ProviderSwitch) => void;
  cooldownMs?: number;
  /** 0: none (a recognizer's first output may come only after a long utterance ends; its own timeouts serve). */
  firstOutputTimeoutMs?: number;
  now?: () => number;
}

/** One request's attempt on link `index`, stopped by `signal` (the caller's, or the chain's first-output timeout). */
export type ChainAttempt<T> = (index: number, signal: AbortSignal) => AsyncIterable<T>;

/**
 * Providers of one stage tried in order: a request goes to the first that has not failed
 * within the cooldown (the others after it, in order); when that one fails retryably before its
 * first output, or gives none within the first-output timeout, the next serves the same request.
 * Once output has come out it is the caller's (heard, or spoken), so a later failure is thrown
 * as it is; the last provider's failure is the request's. Shared by the calls of one thread.
 */
export class ProviderChain<P extends { readonly name: string }> {
  private readonly failedAt: number[];
  private readonly options: Required<Omit<ProviderChainOptions, "onSwitch">> & Pick<ProviderChainOptions, "onSwitch">;

  constructor(
    readonly stage: ProviderStage,
    readonly links: readonly P[],
    options: ProviderChainOptions = {},
  ) {
    if (links.length === 0) throw new Error(`a ${stage} chain needs at least one provider`);
    this.failedAt = links.map(() => -Infinity);
    this.options = { cooldownMs: DEFAULT_COOLDOWN_MS, firstOutputTimeoutMs: DEFAULT_FIRST_OUTPUT_TIMEOUT_MS, now: Date.now, ...options };
  }

  /** The order the next request tries the links in: those not cooling down first, `preferred` first of them. */
  order(preferred?: number): number[] {
    const now = this.options.now();
    const indexes = this.links.map((_, i) => i);
    if (preferred !== undefined) indexes.unshift(...indexes.splice(preferred, 1));
    const fresh = indexes.filter((i) => now - this.failedAt[i]! >= this.options.cooldownMs);
    return [...fresh, ...indexes.filter((i) => !fresh.includes(i))];
  }

  /**
   * Yields one request's output, from the first link that gives it; returns the index of that
   * link. `preferred` is tried first unless it is cooling down. `mayReplace(i)` false keeps a
   * failed link's failure as the request's (it did something a second provider would repeat,
   * or its input failed); it is also asked before the timeout stops one. The first-output clock
   * starts when `inputReady` resolves (at once without it).
   */
  async *serve<T>(
    attempt: ChainAttempt<T>,
    signal: AbortSignal,
    options: { mayReplace?: (index: number) => boolean; preferred?: number; inputReady?: Promise<void> } = {},
  ): AsyncGenerator<T, number> {
    const mayReplace = options.mayReplace ?? (() => true);
    const order = this.order(options.preferred);
    for (const [position, i] of order.entries()) {
      const last = position === order.length - 1;
      const stop = new AbortController();
      const stopAttempt = () => stop.abort();
      signal.addEventListener("abort", stopAttempt, { once: true });
      // An abort before the listener was added fires no event: the attempt must still see it.
      if (signal.aborted) stop.abort();
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      let started = false;
      let ended = false;
      if (!last && this.options.firstOutputTimeoutMs > 0) {
        // The clock runs from when the request's input is there (a synthesis's first sentence).
        void (options.inputReady ?? Promise.resolve()).then(() => {
          if (started || ended || stop.signal.aborted) return;
          timer = setTimeout(() => mayReplace(i) && ((timedOut = true), stop.abort()), this.options.firstOutputTimeoutMs);
        });
      }
      try {
        for await (const item of attempt(i, stop.signal)) {
          if (timedOut) break;
          if (!started) clearTimeout(timer);
          started = true;
          yield item;
        }
        if (!timedOut || signal.aborted) return i;
        this.switchFrom(i, order[position + 1]!, "timeout");
      } catch (error) {
        if (started || signal.aborted || last || !mayReplace(i) || (!timedOut && !isRetryable(error))) throw error;
        this.switchFrom(i, order[position + 1]!, timedOut ? "timeout" : "error");
      } finally {
        ended = true;
        clearTimeout(timer);
        signal.removeEventListener("abort", stopAttempt);
      }
    }
    throw new Error("unreachable: the last link returns or throws");
  }

  /** Marks link `index` failed now (a request it could not open), telling of the switch to `to`. */
  switchFrom(index: number, to: number, reason: ProviderSwitch["reason"]): void {
    this.failedAt[index] = this.options.now();
    this.options.onSwitch?.({ stage: this.stage, from: this.links[index]!.name, to: this.links[to]!.name, reason });
  }
}
