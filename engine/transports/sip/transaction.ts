import type { Clock, TimerHandle } from "../../audio/clock.js";
import type { SipResponse } from "./sip-message.js";

/**
 * What the four RFC 3261 17 transaction state machines share: timer settings, the outgoing
 * datagram function, named timers on an injected clock, and termination. Transactions here
 * run over an unreliable transport (UDP): every retransmission timer is armed.
 */

/** Where a datagram goes (or came from). */
export interface SipAddress {
  address: string;
  port: number;
}

/**
 * Hands one datagram to the network. Throwing, or returning a promise that rejects, is a
 * transport error (RFC 3261 17.1.4, 17.2.4): the transaction reports it and ends.
 */
export type SendDatagram = (datagram: Buffer, address: string, port: number) => void | Promise<unknown>;

export interface TransactionTimerConfig {
  /** RTT estimate (T1, default 500 ms): first retransmission interval; 64*T1 bounds a transaction. */
  t1: number;
  /** Cap on the retransmission interval of non-INVITE requests and INVITE responses (T2, 4 s). */
  t2: number;
  /** How long a message may stay in the network (T4, 5 s): Timers I and K. */
  t4: number;
  /** Timer D, how long an INVITE client absorbs retransmitted final responses (at least 32 s on UDP). */
  timerD: number;
  /** How long an INVITE server waits for the TU's first response before sending 100 Trying itself (200 ms, 17.2.1). */
  tryingDelay: number;
}

export const DEFAULT_TRANSACTION_TIMERS: Readonly<TransactionTimerConfig> = Object.freeze({ t1: 500, t2: 4000, t4: 5000, timerD: 32_000, tryingDelay: 200 });

export const TRANSACTION_STATES = ["calling", "trying", "proceeding", "completed", "confirmed", "accepted", "terminated"] as const;
export type TransactionState = (typeof TRANSACTION_STATES)[number];

/** Why a transaction ended without completing its exchange; reported to the TU. */
export const TRANSACTION_FAILURES = ["timeout", "transport_error"] as const;
export type TransactionFailure = (typeof TRANSACTION_FAILURES)[number];

/** The TU's side of a client transaction. */
export interface ClientTransactionUser {
  /** Each provisional response and the first final one, with where it came from; retransmitted finals are absorbed. */
  response(response: SipResponse, source: SipAddress): void;
  /** No final response in time (Timer B or F), or the request could not be sent. */
  failed(reason: TransactionFailure, error?: unknown): void;
}

/** What the transaction layer gives each transaction. */
export interface TransactionContext {
  clock: Clock;
  send: SendDatagram;
  timers: Readonly<TransactionTimerConfig>;
  /** Called once when the transaction reaches Terminated (the layer forgets it). */
  terminated(transaction: Transaction): void;
}

export abstract class Transaction {
  private current: TransactionState;
  private readonly pending = new Map<string, TimerHandle>();

  protected constructor(
    /** The transaction's key in the layer (branch, sent-by and method). */
    readonly id: string,
    initial: TransactionState,
    protected readonly context: TransactionContext,
  ) {
    this.current = initial;
  }

  get state(): TransactionState {
    return this.current;
  }

  /** Ends the transaction now, quietly: timers stop, later messages no longer match it. */
  terminate(): void {
    if (this.current === "terminated") return;
    this.current = "terminated";
    for (const handle of this.pending.values()) this.context.clock.clearTimeout(handle);
    this.pending.clear();
    this.context.terminated(this);
  }

  /** Reported to the TU before the transaction ends on a timeout or transport error. */
  protected abstract failed(reason: TransactionFailure, error?: unknown): void;

  /** No-op once terminated: a send that failed synchronously has already ended the transaction. */
  protected moveTo(state: TransactionState): void {
    if (state === "terminated") this.terminate();
    else if (this.current !== "terminated") this.current = state;
  }

  protected get timers(): Readonly<TransactionTimerConfig> {
    return this.context.timers;
  }

  /** Arms timer `name` (replacing one of the same name); it fires only while the transaction lives. */
  protected startTimer(name: string, delayMs: number, fire: () => void): void {
    this.stopTimer(name);
    if (this.current === "terminated") return;
    const handle = this.context.clock.setTimeout(() => {
      this.pending.delete(name);
      if (this.current !== "terminated") fire();
    }, delayMs);
    this.pending.set(name, handle);
  }

  protected stopTimer(name: string): void {
    const handle = this.pending.get(name);
    if (handle === undefined) return;
    this.context.clock.clearTimeout(handle);
    this.pending.delete(name);
  }

  /** Sends serialized bytes; a transport error fails the transaction. */
  protected transmit(datagram: Buffer, to: SipAddress): void {
    const fail = (error: unknown) => {
      if (this.current === "terminated") return;
      this.failed("transport_error", error);
      this.terminate();
    };
    try {
      const result = this.context.send(datagram, to.address, to.port);
      if (result instanceof Promise) result.catch(fail);
    } catch (error) {
      fail(error);
    }
  }
}
