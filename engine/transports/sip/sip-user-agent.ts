import { randomInt } from "node:crypto";
import dgram, { type Socket } from "node:dgram";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { EventEmitter } from "eventemitter3";
import { systemClock, type Clock, type TimerHandle } from "../../audio/clock.js";
import type { DigestCredentials } from "./digest-auth.js";
import { RtpSession } from "./rtp-session.js";
import { SdpError } from "./sdp-error.js";
import { answerOffer, createOffer, readAnswer, type LocalMedia, type NegotiatedMedia } from "./sdp-negotiation.js";
import { parseSdp, writeSdp } from "./sdp.js";
import { ALLOWED_METHODS, respond, SipCall, SipCallError, type SipCallHost } from "./sip-call.js";
import { createCallId, createTag, dialogKey, SipDialog, uriDestination, viaFor, type LocalEndpoint } from "./sip-dialog.js";
import { SipHeaders } from "./sip-headers.js";
import { parseNameAddress } from "./sip-header-values.js";
import { buildResponse, getCallId, getCSeq, getFrom, getTo, type SipRequest, type SipResponse } from "./sip-message.js";
import { parseSipUri } from "./sip-uri.js";
import { OVERLOADED, TransactionLayer, WITHIN_CALL, type IncomingRequest, type Refusal, type TransactionUser } from "./transaction-layer.js";
import { DEFAULT_TRANSACTION_TIMERS, type ClientTransactionUser, type SipAddress, type TransactionTimerConfig } from "./transaction.js";
import { TrunkCredentials } from "./trunk-credentials.js";
import type { InviteClientTransaction } from "./invite-client-transaction.js";
import type { InviteServerTransaction } from "./invite-server-transaction.js";

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

export interface OutgoingCallOptions {
  /** The callee's URI, e.g. `sip:+15551234@trunk.example.com`. */
  to: string;
  /** Our From URI or just a number (default `sip:parley@<our address>`). */
  from?: string;
  /** Where the INVITE goes (the trunk); default: the `to` URI's host and port. */
  target?: SipAddress;
  /** Give up ringing after this long (CANCEL, rejects with outcome `no_answer`). */
  timeoutMs?: number;
  /**
   * Answers 401/407 Digest challenges to the INVITE and to our later requests in the call (a
   * trunk account), only when they come from `target` (see TrunkCredentials).
   */
  credentials?: DigestCredentials;
}

/**
 * A SIP user agent over one UDP socket: the transaction layer, the dialogs of its calls, inbound
 * INVITEs handed to `onInvite` as IncomingCalls, and outbound calls (`invite`). OPTIONS outside a
 * dialog get 200; requests for unknown dialogs get 481. Outbound calls answer Digest challenges
 * when given credentials; no registration, no challenging of inbound requests, no TCP.
 *
 * Under a flood, memory stays bounded: requests from refused sources, for unknown dialogs, or
 * past the caps on calls and transactions are answered statelessly (403, 481, 503) and leave
 * nothing behind.
 */
export class SipUserAgent implements SipCallHost {
  readonly layer: TransactionLayer;
  readonly clock: Clock;
  readonly timers: Readonly<TransactionTimerConfig>;
  readonly endpoint: LocalEndpoint;
  private readonly calls = new Map<string, SipCall>();
  private readonly acks = new Map<string, { ack: SipRequest; destination: SipAddress }>();
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
  register(call: SipCall, ack?: { ack: SipRequest; destination: SipAddress }): void {
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

export const INCOMING_CALL_STATES = ["pending", "answering", "answered", "rejected", "cancelled"] as const;
export type IncomingCallState = (typeof INCOMING_CALL_STATES)[number];

/**
 * An inbound INVITE waiting for a decision. `answer()` opens RTP, answers the SDP offer (or
 * offers in the 200 when the INVITE had none), sends 200 and resolves once the ACK arrives;
 * `reject()` sends a final error. A CANCEL before the answer gets the INVITE a 487 and emits
 * `cancelled`.
 */
export class IncomingCall extends EventEmitter<{ cancelled: () => void }> {
  readonly callId: string;
  /** The caller's number or user (From). */
  readonly from: string;
  /** The dialled number (Request-URI user, else To user). */
  readonly to: string;
  private current: IncomingCallState = "pending";
  private readonly tag = createTag();

  constructor(
    private readonly ua: SipUserAgent,
    readonly request: SipRequest,
    /** @internal */
    readonly transaction: InviteServerTransaction,
    /** Where the INVITE came from. */
    readonly source: SipAddress,
  ) {
    super();
    this.callId = getCallId(request);
    this.from = getFrom(request).uri.user ?? "";
    let dialled: string | undefined;
    try {
      dialled = parseSipUri(request.uri).user;
    } catch {
      dialled = undefined;
    }
    this.to = dialled ?? getTo(request).uri.user ?? "";
  }

  get state(): IncomingCallState {
    return this.current;
  }

  get cancelled(): boolean {
    return this.current === "cancelled";
  }

  /** Sends 180 Ringing. */
  ring(): void {
    if (this.current === "pending" || this.current === "answering") this.send(180, "Ringing");
  }

  reject(status = 486, reason = "Busy Here"): void {
    if (this.current !== "pending") throw new Error(`cannot reject a call that is ${this.current}`);
    this.current = "rejected";
    this.ua.settled(this);
    this.send(status, reason);
  }

  async answer(options: { ring?: boolean } = {}): Promise<SipCall> {
    if (this.current !== "pending") throw new Error(`cannot answer a call that is ${this.current}`);
    this.current = "answering";
    if (options.ring) this.ring();
    const rtp = await this.ua.openRtp().catch((error: unknown) => {
      this.fail(500, "Server Internal Error");
      throw error;
    });
    if (this.current !== "answering") {
      await rtp.close();
      throw new SipCallError("cancelled", 487, "the caller cancelled");
    }
    const local = this.ua.localMedia(rtp.localPort);
    let body: string;
    let media: NegotiatedMedia | undefined;
    let dialog: SipDialog;
    try {
      if (this.request.body.byteLength > 0) {
        const negotiated = answerOffer(parseSdp(this.request.body.toString("utf8")), local);
        media = negotiated.media;
        body = writeSdp(negotiated.answer);
      } else {
        body = writeSdp(createOffer(local));
      }
      dialog = SipDialog.forIncomingInvite(this.request, this.tag, this.ua.endpoint);
    } catch (error) {
      await rtp.close();
      const status = error instanceof SdpError && error.reason !== "malformed" ? 488 : 400;
      this.fail(status, status === 488 ? "Not Acceptable Here" : "Bad Request");
      throw new SipCallError("failed", status, error instanceof Error ? error.message : String(error));
    }
    const call = new SipCall(this.ua, dialog, rtp, { direction: "inbound", remoteNumber: this.from, localNumber: this.to, localMedia: local });
    if (media) rtp.start(media, this.source.address);
    this.ua.register(call);
    const response = buildResponse(this.request, 200, "OK", {
      toTag: this.tag,
      headers: [
        ...this.request.headers.getAll("Record-Route").map((route) => ["Record-Route", route] as const),
        ["Contact", this.ua.endpoint.contact],
        ["Allow", ALLOWED_METHODS],
        ["Content-Type", "application/sdp"],
      ],
      body: Buffer.from(body),
    });
    this.current = "answered";
    this.ua.settled(this);
    this.transaction.respond(response);
    let ack: SipRequest;
    try {
      ack = await call.waitForAck(response, this.transaction.responseDestination);
    } catch (error) {
      await call.hangUp();
      throw error;
    }
    if (!media) {
      try {
        rtp.start(readAnswer(parseSdp(ack.body.toString("utf8"))), this.source.address);
      } catch {
        await call.hangUp();
        throw new SipCallError("failed", 488, "the ACK carried no usable SDP answer");
      }
    }
    return call;
  }

  /** @internal A CANCEL matched this INVITE. */
  cancel(): void {
    if (this.current !== "pending" && this.current !== "answering") return;
    this.current = "cancelled";
    this.ua.settled(this);
    this.send(487, "Request Terminated");
    this.emit("cancelled");
  }

  private fail(status: number, reason: string): void {
    if (this.current !== "answering") return;
    this.current = "rejected";
    this.ua.settled(this);
    this.send(status, reason);
  }

  private send(status: number, reason: string): void {
    this.transaction.respond(buildResponse(this.request, status, reason, { toTag: this.tag }));
  }
}

/**
 * An outbound call being set up. `result` resolves with the SipCall on a 2xx (after the ACK is
 * sent and the SDP answer applied) or rejects with a SipCallError: `busy` (486/600),
 * `no_answer` (408/480, or `timeoutMs`), `cancelled` (487 after `cancel()`), `rejected`, `timeout`.
 * With `credentials`, a 401/407 from the target (the trunk) is answered by the INVITE again with
 * the next CSeq, a new branch and the Digest answer (RFC 3261 22.2); a challenge from anywhere
 * else, or a second one of the same kind (the credentials were refused), rejects, so a wrong
 * password never loops.
 */
export class OutgoingCall extends EventEmitter<{ ringing: (status: number) => void; progress: (status: number, reason: string) => void }> {
  readonly callId: string;
  readonly result: Promise<SipCall>;
  /** The INVITE of the current transaction: the latest, after a challenge. */
  private invite: SipRequest | undefined;
  private transaction: InviteClientTransaction | undefined;
  private target: SipAddress | undefined;
  private credentials: TrunkCredentials | undefined;
  private transactionUser: ClientTransactionUser | undefined;
  private provisional = false;
  private cancelRequested = false;
  private cancelSent = false;
  private noAnswer = false;
  private finished = false;
  private timer: TimerHandle | undefined;
  private abort: ((error: Error) => void) | undefined;

  constructor(
    private readonly ua: SipUserAgent,
    private readonly options: OutgoingCallOptions,
  ) {
    super();
    this.callId = createCallId(ua.endpoint.address);
    this.result = this.run();
    this.result.catch(() => undefined);
  }

  /** Gives up: CANCEL once the far end has sent a provisional response (RFC 3261 9.1). */
  cancel(): void {
    if (this.finished) return;
    this.cancelRequested = true;
    if (this.provisional) this.sendCancel();
  }

  private async run(): Promise<SipCall> {
    const to = parseNameAddress(this.options.to);
    const from = this.options.from ?? "parley";
    const fromUri = /^(sips?|tel):/i.test(from) ? from : `sip:${from}@${this.ua.endpoint.address}`;
    const target = this.options.target ?? uriDestination(to.uri);
    // Resolved once: a challenge must come back from the very address the INVITE went to.
    const address = await this.ua.resolve(target.address).catch((error: unknown) => {
      throw new SipCallError("failed", 503, `cannot resolve ${target.address}: ${(error as Error).message}`);
    });
    this.target = { address, port: target.port };
    if (this.options.credentials) this.credentials = new TrunkCredentials(this.options.credentials, { host: target.address, address });
    const rtp = await this.ua.openRtp();
    if (this.cancelRequested) {
      await rtp.close();
      throw new SipCallError("cancelled", 487, "cancelled before the INVITE was sent");
    }
    const local = this.ua.localMedia(rtp.localPort);
    const headers = new SipHeaders()
      .append("Via", viaFor(this.ua.endpoint))
      .append("Max-Forwards", "70")
      .append("From", `<${fromUri}>;tag=${createTag()}`)
      .append("To", `<${this.options.to.replace(/^<|>$/g, "")}>`)
      .append("Call-ID", this.callId)
      .append("CSeq", `${randomInt(1, 2 ** 20)} INVITE`)
      .append("Contact", this.ua.endpoint.contact)
      .append("Allow", ALLOWED_METHODS)
      .append("User-Agent", "Parley")
      .append("Content-Type", "application/sdp");
    const invite: SipRequest = { kind: "request", method: "INVITE", uri: this.options.to.replace(/^<|>$/g, ""), headers, body: Buffer.from(writeSdp(createOffer(local))) };
    if (this.options.timeoutMs !== undefined) {
      this.timer = this.ua.clock.setTimeout(() => {
        this.noAnswer = true;
        this.cancel();
      }, this.options.timeoutMs);
    }
    try {
      return await new Promise<SipCall>((resolve, reject) => {
        this.abort = reject;
        this.transactionUser = {
          response: (response, source) => {
            try {
              this.onResponse(response, source, rtp, local, resolve, reject);
            } catch (error) {
              reject(error as Error);
            }
          },
          failed: (reason) => reject(new SipCallError(this.noAnswer ? "no_answer" : reason === "timeout" ? "timeout" : "failed", 408, `INVITE ${reason}`)),
        };
        this.send(invite);
      });
    } catch (error) {
      await rtp.close();
      throw error;
    } finally {
      this.finished = true;
      if (this.timer !== undefined) this.ua.clock.clearTimeout(this.timer);
    }
  }

  /** Starts the INVITE transaction for `invite`, which becomes the current one (the one CANCEL targets). */
  private send(invite: SipRequest): void {
    this.invite = invite;
    this.provisional = false;
    this.transaction = this.ua.layer.sendRequest(invite, this.target!, this.transactionUser!) as InviteClientTransaction;
  }

  private onResponse(response: SipResponse, source: SipAddress, rtp: RtpSession, local: LocalMedia, resolve: (call: SipCall) => void, reject: (error: Error) => void): void {
    const invite = this.invite!;
    if (response.status < 200) {
      this.provisional = true;
      this.emit("progress", response.status, response.reason);
      if (response.status === 180 || response.status === 183) this.emit("ringing", response.status);
      if (this.cancelRequested) this.sendCancel();
      return;
    }
    if (response.status >= 300) {
      if (this.authenticate(response, source, reject)) return;
      const error = SipCallError.fromStatus(response.status, response.reason);
      return reject(this.noAnswer && error.outcome === "cancelled" ? new SipCallError("no_answer", 408, "no answer") : error);
    }
    const dialog = SipDialog.forAnsweredInvite(invite, response, this.ua.endpoint);
    const ack = dialog.createRequest("ACK", { seq: getCSeq(invite).seq });
    const destination = dialog.destination;
    void Promise.resolve(this.ua.layer.sendStateless(ack, destination)).catch(() => undefined);
    const remoteNumber = parseNameAddress(this.options.to).uri.user ?? "";
    const credentials = this.credentials;
    const call = new SipCall(this.ua, dialog, rtp, { direction: "outbound", remoteNumber, localNumber: dialog.local.uri.user ?? "", localMedia: local, ...(credentials ? { credentials } : {}) });
    this.ua.register(call, { ack, destination });
    if (this.cancelRequested) {
      void call.hangUp();
      return reject(new SipCallError(this.noAnswer ? "no_answer" : "cancelled", 487, "answered after CANCEL; hung up"));
    }
    try {
      rtp.start(readAnswer(parseSdp(response.body.toString("utf8"))), source.address);
    } catch (error) {
      void call.hangUp();
      return reject(new SipCallError("failed", 488, `unusable SDP answer: ${error instanceof Error ? error.message : String(error)}`));
    }
    resolve(call);
  }

  /**
   * A 401/407 we can answer: sends the INVITE again with the challenge answered (the
   * transaction has ACKed the challenge), keeping earlier answers, as a proxy and the trunk may
   * each challenge (22.3). True when the response is dealt with (also when we were cancelled meanwhile).
   */
  private authenticate(response: SipResponse, source: SipAddress, reject: (error: Error) => void): boolean {
    const previous = this.invite!;
    const answer = this.credentials?.answer(response, previous, this.target!, source);
    // Challenged again for a kind we answered: the credentials were refused.
    if (!answer || previous.headers.has(answer[0])) return false;
    if (this.cancelRequested) {
      reject(new SipCallError(this.noAnswer ? "no_answer" : "cancelled", 487, "cancelled before the authenticated INVITE was sent"));
      return true;
    }
    const headers = previous.headers
      .clone()
      .set("Via", viaFor(this.ua.endpoint))
      .set("CSeq", `${getCSeq(previous).seq + 1} INVITE`)
      .append(...answer);
    this.send({ ...previous, headers });
    return true;
  }

  private sendCancel(): void {
    const invite = this.invite;
    if (this.cancelSent || !invite || this.finished) return;
    this.cancelSent = true;
    const headers = new SipHeaders()
      .append("Via", invite.headers.get("Via") ?? "")
      .set("Route", ...invite.headers.getAll("Route"))
      .append("Max-Forwards", "70")
      .append("From", invite.headers.get("From") ?? "")
      .append("To", invite.headers.get("To") ?? "")
      .append("Call-ID", this.callId)
      .append("CSeq", `${getCSeq(invite).seq} CANCEL`);
    const cancel: SipRequest = { kind: "request", method: "CANCEL", uri: invite.uri, headers, body: Buffer.alloc(0) };
    const transaction = this.transaction;
    this.ua.layer.sendRequest(cancel, transaction?.destination ?? uriDestination(parseSipUri(invite.uri)), { response: () => undefined, failed: () => undefined });
    // RFC 3261 9.1: without a final response 64*T1 after the CANCEL, the INVITE transaction is given up.
    this.ua.clock.setTimeout(() => {
      if (!this.finished && transaction) {
        transaction.terminate();
        this.abort?.(new SipCallError(this.noAnswer ? "no_answer" : "cancelled", 408, "no final response after CANCEL"));
      }
    }, 64 * this.ua.timers.t1);
  }
}
