import { randomInt } from "node:crypto";
import dgram, { type Socket } from "node:dgram";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { systemClock, type Clock } from "../../audio/clock.js";
import type { SentAck } from "./call-setup-host.js";
import { IncomingCall, type IncomingCallHost } from "./incoming-call.js";
import type { InviteServerTransaction } from "./invite-server-transaction.js";
import { OutgoingCall, type OutgoingCallHost, type OutgoingCallOptions } from "./outgoing-call.js";
import { RtpSession } from "./rtp-session.js";
import type { LocalMedia } from "./sdp-negotiation.js";
import { ALLOWED_METHODS, respond, type SipCall } from "./sip-call.js";
import { dialogKey, type LocalEndpoint } from "./sip-dialog.js";
import { getCallId, getCSeq, getFrom, getTo, type SipRequest } from "./sip-message.js";
import { OVERLOADED, TransactionLayer, WITHIN_CALL, type IncomingRequest, type Refusal, type TransactionUser } from "./transaction-layer.js";
import { DEFAULT_TRANSACTION_TIMERS, type SipAddress, type TransactionTimerConfig } from "./transaction.js";

export interface SipUserAgentOptions {
  /** Address to bind the SIP socket (and RTP sockets) to. */
  host: string;
  /** UDP port; 0 (the default) lets the OS pick: read `port` afterwards. */
  port?: number;
  /** Address written into Via, Contact and SDP (default: `host`, or 127.0.0.1 for 0.0.0.0). */
  publicAddress?: string;
  /** Inclusive RTP port range (default: any port the OS gives). */
  rtpPortRange?: readonly [number, number];
  /** A call whose far end sends no RTP this long ends (see RtpSession's `timeout`); default DEFAULT_RTP_TIMEOUT_MS, 0 never. */
  rtpTimeoutMs?: number;
  /** Decides each new inbound call: `answer()` or `reject()`. Without it, calls get 480. */
  onInvite?: (call: IncomingCall) => void;
  /**
   * Whether a source may send requests outside a dialog (INVITE, OPTIONS, CANCEL, ...); default
   * any. Refused ones get one stateless 403 (see TransactionUser.screen) before any transaction
   * or call exists for them.
   */
  acceptsSource?: (source: SipAddress) => boolean;
  /** Calls at most, up and waiting for a decision together (default DEFAULT_MAX_CALLS); past it an INVITE gets a stateless 503. */
  maxCalls?: number;
  /** Live server transactions at most (default DEFAULT_MAX_SERVER_TRANSACTIONS); past it a request gets a stateless 503. */
  maxTransactions?: number;
  clock?: Clock;
  timers?: Partial<TransactionTimerConfig>;
}

/** Default cap on calls (each holds an RTP socket and a jitter buffer): far above what one node runs, low enough to bound a flood. */
export const DEFAULT_MAX_CALLS = 200;

/**
 * A SIP user agent over one UDP socket: the transaction layer, the dialogs of its calls, inbound
 * INVITEs handed to `onInvite` as IncomingCalls (incoming-call.ts), and outbound calls (`invite`,
 * an OutgoingCall: outgoing-call.ts); this file routes requests to them. OPTIONS outside a
 * dialog get 200; requests for unknown dialogs get 481. Outbound calls answer Digest challenges
 * when given credentials; no registration, no challenging of inbound requests, no TCP.
 *
 * Under a flood, memory stays bounded: requests from refused sources, for unknown dialogs, or
 * past the caps on calls and transactions are answered statelessly (403, 481, 503) and leave
 * nothing behind.
 */
export class SipUserAgent implements IncomingCallHost, OutgoingCallHost {
  readonly layer: TransactionLayer;
  readonly clock: Clock;
  readonly timers: Readonly<TransactionTimerConfig>;
  readonly endpoint: LocalEndpoint;
  private readonly calls = new Map<string, SipCall>();
  private readonly acks = new Map<string, SentAck>();
  private readonly pending = new Map<InviteServerTransaction, IncomingCall>();
  private closed = false;

  static async start(options: SipUserAgentOptions): Promise<SipUserAgent> {
    const socket = dgram.createSocket(options.host.includes(":") ? "udp6" : "udp4");
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(options.port ?? 0, options.host, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    return new SipUserAgent(socket, options);
  }

  private constructor(
    private readonly socket: Socket,
    readonly options: SipUserAgentOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.timers = Object.freeze({ ...DEFAULT_TRANSACTION_TIMERS, ...options.timers });
    const address = options.publicAddress ?? (options.host === "0.0.0.0" ? "127.0.0.1" : options.host);
    const port = socket.address().port;
    this.endpoint = Object.freeze({ address, port, contact: `<sip:parley@${address}:${port}>` });
    this.layer = new TransactionLayer({
      send: (datagram, to, toPort) =>
        new Promise<void>((resolve, reject) => socket.send(datagram, toPort, to, (error) => (error ? reject(error) : resolve()))),
      user: this.transactionUser(),
      clock: this.clock,
      timers: this.timers,
      ...(options.maxTransactions !== undefined ? { maxServerTransactions: options.maxTransactions } : {}),
    });
    socket.on("message", (datagram, from) => {
      try {
        this.layer.receive(datagram, { address: from.address, port: from.port });
      } catch {
        // A bug in one message's handling must not take the socket down.
      }
    });
    socket.on("error", () => undefined);
  }

  /** The bound SIP port. */
  get port(): number {
    return this.endpoint.port;
  }

  /** Calls up right now. */
  get activeCalls(): number {
    return this.calls.size;
  }

  /** The calls up right now (for their RTP counters: what a flood did to them). */
  get liveCalls(): readonly SipCall[] {
    return [...this.calls.values()];
  }

  /** How much per-call state is held: calls up, their ACKs kept for retransmission, and INVITEs being decided. */
  get heldState(): { calls: number; acks: number; pending: number } {
    return { calls: this.calls.size, acks: this.acks.size, pending: this.pending.size };
  }

  /** Places a call: INVITE with our SDP offer; `result` resolves with the SipCall once answered. */
  invite(options: OutgoingCallOptions): OutgoingCall {
    if (this.closed) throw new Error("the user agent is closed");
    return new OutgoingCall(this, options);
  }

  /** Ends every call without signalling, stops the transactions and closes the socket. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const call of [...this.calls.values()]) call.finish();
    this.layer.close();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  forget(call: SipCall): void {
    this.calls.delete(call.dialog.id);
    this.acks.delete(call.dialog.id);
  }

  /** @internal */
  register(call: SipCall, ack?: SentAck): void {
    this.calls.set(call.dialog.id, call);
    if (ack) this.acks.set(call.dialog.id, ack);
  }

  /** @internal */
  openRtp(): Promise<RtpSession> {
    return RtpSession.open({
      host: this.options.host,
      ...(this.options.rtpPortRange ? { portRange: this.options.rtpPortRange } : {}),
      ...(this.options.rtpTimeoutMs !== undefined ? { timeoutMs: this.options.rtpTimeoutMs } : {}),
      clock: this.clock,
    });
  }

  /** @internal The address `host` (a name or an address) resolves to, for this socket's family. */
  async resolve(host: string): Promise<string> {
    if (isIP(host)) return host;
    return (await lookup(host, { family: this.socket.address().family === "IPv6" ? 6 : 4 })).address;
  }

  /** @internal */
  localMedia(port: number): LocalMedia {
    return { address: this.endpoint.address, port, sessionId: String(randomInt(1, 2 ** 47)) };
  }

  /** @internal */
  settled(call: IncomingCall): void {
    this.pending.delete(call.transaction);
  }

  private transactionUser(): TransactionUser {
    return {
      request: (incoming) => {
        try {
          this.route(incoming);
        } catch {
          if (incoming.request.method !== "ACK") respond(incoming, 500, "Server Internal Error");
        }
      },
      screen: (request, source) => this.screen(request, source),
      strayResponse: (response) => {
        // A retransmitted 2xx: its ACK was lost, send it again (RFC 3261 13.2.2.4).
        if (getCSeq(response).method !== "INVITE" || response.status >= 300) return;
        const key = dialogKey(getCallId(response), getFrom(response).params.tag ?? "", getTo(response).params.tag ?? "");
        const sent = this.acks.get(key);
        if (sent) void Promise.resolve(this.layer.sendStateless(sent.ack, sent.destination)).catch(() => undefined);
      },
      serverTransactionFailed: () => undefined,
    };
  }

  /** Decides, before any transaction exists, which new requests are refused statelessly. */
  private screen(request: SipRequest, source: SipAddress): Refusal | typeof WITHIN_CALL | undefined {
    if (getTo(request).params.tag !== undefined) {
      return this.callFor(request) ? WITHIN_CALL : { status: 481, reason: "Call/Transaction Does Not Exist" };
    }
    if (this.options.acceptsSource && !this.options.acceptsSource(source)) return { status: 403, reason: "Forbidden" };
    if (request.method === "INVITE" && this.calls.size + this.pending.size >= (this.options.maxCalls ?? DEFAULT_MAX_CALLS)) return OVERLOADED;
    return undefined;
  }

  /** The call whose dialog an in-dialog request (one with a To tag) belongs to. */
  private callFor(request: SipRequest): SipCall | undefined {
    return this.calls.get(dialogKey(getCallId(request), getTo(request).params.tag ?? "", getFrom(request).params.tag ?? ""));
  }

  private route(incoming: IncomingRequest): void {
    const { request } = incoming;
    if (getTo(request).params.tag !== undefined) {
      // Screened: only an ACK can be here without its call, and it gets no answer.
      this.callFor(request)?.receiveRequest(incoming);
      return;
    }
    switch (request.method) {
      case "INVITE":
        return this.newCall(incoming);
      case "CANCEL": {
        const call = incoming.cancels && this.pending.get(incoming.cancels);
        respond(incoming, incoming.cancels ? 200 : 481, incoming.cancels ? "OK" : "Call/Transaction Does Not Exist");
        call?.cancel();
        return;
      }
      case "OPTIONS":
        return respond(incoming, 200, "OK", [["Allow", ALLOWED_METHODS], ["Accept", "application/sdp"]]);
      case "ACK":
        return;
      case "BYE":
        return respond(incoming, 481, "Call/Transaction Does Not Exist");
      default:
        return respond(incoming, 405, "Method Not Allowed", [["Allow", ALLOWED_METHODS]]);
    }
  }

  private newCall(incoming: IncomingRequest): void {
    const transaction = incoming.transaction as InviteServerTransaction;
    const call = new IncomingCall(this, incoming.request, transaction, incoming.source);
    if (this.closed || !this.options.onInvite) return call.reject(480, "Temporarily Unavailable");
    this.pending.set(transaction, call);
    try {
      this.options.onInvite(call);
    } catch {
      if (call.state === "pending") call.reject(500, "Server Internal Error");
    }
  }
}
