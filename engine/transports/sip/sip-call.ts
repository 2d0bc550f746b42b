import { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../../audio/audio-frame.js";
import type { Clock, TimerHandle } from "../../audio/clock.js";
import type { DtmfDigit } from "./dtmf-event.js";
import type { RtpSession } from "./rtp-session.js";
import { SdpError } from "./sdp-error.js";
import { answerOffer, type LocalMedia } from "./sdp-negotiation.js";
import { parseSdp, writeSdp } from "./sdp.js";
import type { SipDialog } from "./sip-dialog.js";
import { parseNameAddress } from "./sip-header-values.js";
import { buildResponse, getCSeq, type SipRequest, type SipResponse } from "./sip-message.js";
import type { IncomingRequest, TransactionLayer } from "./transaction-layer.js";
import { formatSipUri } from "./sip-uri.js";
import type { SipAddress, TransactionTimerConfig } from "./transaction.js";
import type { TrunkCredentials } from "./trunk-credentials.js";

/** Methods this UA takes (the Allow header). */
export const ALLOWED_METHODS = "INVITE, ACK, BYE, CANCEL, OPTIONS, REFER, NOTIFY";

/** What a call needs from the user agent that owns it. */
export interface SipCallHost {
  readonly layer: TransactionLayer;
  readonly clock: Clock;
  readonly timers: Readonly<TransactionTimerConfig>;
  /** The call ended: stop routing its dialog's requests to it. */
  forget(call: SipCall): void;
}

export const SIP_CALL_OUTCOMES = ["busy", "no_answer", "cancelled", "rejected", "timeout", "failed"] as const;
export type SipCallOutcome = (typeof SIP_CALL_OUTCOMES)[number];

/** A call that did not get set up (or a request in it that failed): the SIP status and what it means. */
export class SipCallError extends Error {
  override readonly name = "SipCallError";
  constructor(
    readonly outcome: SipCallOutcome,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  static fromStatus(status: number, reason: string): SipCallError {
    const outcome: SipCallOutcome =
      status === 486 || status === 600 ? "busy" : status === 408 || status === 480 ? "no_answer" : status === 487 ? "cancelled" : "rejected";
    return new SipCallError(outcome, status, `${status} ${reason}`);
  }
}

/** A REFER the far end sent us (we are asked to transfer). Report progress with `notify`. */
export interface IncomingRefer {
  /** The Refer-To URI. */
  target: string;
  /** Sends a NOTIFY with a `message/sipfrag` status line; a final status ends the subscription. */
  notify(status: number, reason: string): Promise<void>;
}

export interface SipCallEvents {
  /** The far end ended the call (BYE), it never got its ACK, or it went silent (`rtp_timeout`: we sent BYE). */
  hangup: (reason: string) => void;
  /** Far-end audio, 20 ms frames at 8 kHz. */
  audio: (frame: AudioFrame) => void;
  dtmf: (digit: DtmfDigit) => void;
  /** The far end asks us to transfer; without a listener the REFER is declined (603). */
  refer: (refer: IncomingRefer) => void;
}

export interface SipCallInfo {
  direction: "inbound" | "outbound";
  /** The far end's number (From user for inbound, the dialled user for outbound). */
  remoteNumber: string;
  /** Our number (the dialled user for inbound, our From user for outbound). */
  localNumber: string;
  /** Our side of the SDP, kept to answer re-INVITEs with the same media. */
  localMedia: LocalMedia;
  /** Answers the trunk's 401/407 challenges to our requests (outbound calls through a trunk), and nobody else's. */
  credentials?: TrunkCredentials;
}

/**
 * One established SIP call: an INVITE dialog plus its RTP session. Requests inside the dialog
 * reach it from the user agent: BYE ends it (`hangup`), re-INVITE is answered with the same
 * media, REFER and NOTIFY drive transfers. `hangUp()` sends BYE; `refer()` asks the far end to
 * transfer the call.
 */
export class SipCall extends EventEmitter<SipCallEvents> {
  private ended = false;
  private ack: { resolve: (ack: SipRequest) => void; reject: (error: Error) => void; timers: TimerHandle[] } | undefined;
  private readonly referWaits = new Set<(status: number | null) => void>();
  private sdpVersion = 1;

  constructor(
    private readonly host: SipCallHost,
    readonly dialog: SipDialog,
    readonly rtp: RtpSession,
    readonly info: SipCallInfo,
  ) {
    super();
    rtp.on("audio", (frame) => this.emit("audio", frame));
    rtp.on("dtmf", (digit) => this.emit("dtmf", digit));
    rtp.on("timeout", () => {
      if (this.ended) return;
      void this.hangUp();
      this.emit("hangup", "rtp_timeout");
    });
  }

  get callId(): string {
    return this.dialog.callId;
  }

  get active(): boolean {
    return !this.ended;
  }

  sendAudio(frame: AudioFrame): void {
    if (!this.ended) this.rtp.sendAudio(frame);
  }

  sendDtmf(digits: string): Promise<void> {
    return this.rtp.sendDtmf(digits);
  }

  /** Sends BYE (waiting for its response or timeout) and releases the RTP port. */
  async hangUp(): Promise<void> {
    if (this.ended) return;
    this.finish();
    await this.send(() => this.dialog.createRequest("BYE")).catch(() => undefined);
  }

  /**
   * Asks the far end to transfer the call to `target` (RFC 3515). Rejects when the REFER is
   * refused or a NOTIFY reports a failure; resolves on a NOTIFY reporting 2xx, when the far end
   * hangs up, or `timeoutMs` after the REFER was accepted without a final NOTIFY.
   */
  async refer(target: string, options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.ended) throw new SipCallError("failed", 481, "the call has ended");
    let settle: (status: number | null) => void = () => undefined;
    const final = new Promise<number | null>((resolve) => (settle = resolve));
    this.referWaits.add(settle);
    const referTo = target.startsWith("<") ? target : `<${target}>`;
    try {
      const response = await this.send(() => this.dialog.createRequest("REFER", { headers: [["Refer-To", referTo]] }));
      if (response.status >= 300) throw SipCallError.fromStatus(response.status, response.reason);
      const timer = this.host.clock.setTimeout(() => settle(null), options.timeoutMs ?? 32_000);
      const status = await final;
      this.host.clock.clearTimeout(timer);
      if (status !== null && status >= 300) throw SipCallError.fromStatus(status, "transfer failed");
    } finally {
      this.referWaits.delete(settle);
    }
  }

  /**
   * For the user agent: re-sends our 2xx to the INVITE (T1 doubling up to T2, RFC 3261
   * 13.3.1.4) until its ACK arrives; rejects after 64*T1 without one.
   */
  waitForAck(response: SipResponse, destination: SipAddress): Promise<SipRequest> {
    const { clock, timers, layer } = this.host;
    return new Promise((resolve, reject) => {
      const wait = { resolve, reject, timers: [] as TimerHandle[] };
      const resend = (interval: number) => {
        wait.timers[0] = clock.setTimeout(() => {
          void Promise.resolve(layer.sendStateless(response, destination)).catch(() => undefined);
          resend(Math.min(interval * 2, timers.t2));
        }, interval);
      };
      resend(timers.t1);
      wait.timers[1] = clock.setTimeout(() => {
        this.stopAckWait();
        reject(new SipCallError("timeout", 408, "no ACK for the 2xx"));
      }, 64 * timers.t1);
      this.ack = wait;
    });
  }

  /** For the user agent: a request inside this call's dialog. */
  receiveRequest(incoming: IncomingRequest): void {
    const { request } = incoming;
    if (request.method === "ACK") {
      const wait = this.ack;
      this.stopAckWait();
      wait?.resolve(request);
      return;
    }
    const seq = getCSeq(request).seq;
    if (this.dialog.remoteSeq !== undefined && seq < this.dialog.remoteSeq) return respond(incoming, 500, "CSeq Out of Order");
    this.dialog.remoteSeq = seq;
    switch (request.method) {
      case "BYE":
        respond(incoming, 200, "OK");
        if (!this.ended) {
          this.finish();
          this.emit("hangup", "remote_hangup");
        }
        return;
      case "INVITE":
        return this.reinvite(incoming);
      case "REFER":
        return this.referred(incoming);
      case "NOTIFY":
        return this.notified(incoming);
      case "OPTIONS":
        return respond(incoming, 200, "OK", [["Allow", ALLOWED_METHODS]]);
      default:
        return respond(incoming, 405, "Method Not Allowed", [["Allow", ALLOWED_METHODS]]);
    }
  }

  /** For the user agent: ends the call without signalling (shutdown, failed set-up). */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    const wait = this.ack;
    this.stopAckWait();
    wait?.reject(new SipCallError("failed", 481, "the call ended before the ACK"));
    for (const settle of this.referWaits) settle(null);
    void this.rtp.close();
    this.host.forget(this);
  }

  /** A re-INVITE (session refresh, hold): answered with our same media, the new offer applied. */
  private reinvite(incoming: IncomingRequest): void {
    const { request } = incoming;
    const local = { ...this.info.localMedia, sessionVersion: String(this.sdpVersion++) };
    let body: string;
    try {
      if (request.body.byteLength === 0) throw new SdpError("no_audio", "re-INVITE without an offer");
      const { answer, media } = answerOffer(parseSdp(request.body.toString("utf8")), local);
      this.rtp.start(media, incoming.source.address);
      body = writeSdp(answer);
    } catch (error) {
      if (!(error instanceof SdpError)) throw error;
      return respond(incoming, 488, "Not Acceptable Here");
    }
    const response = buildResponse(request, 200, "OK", {
      headers: [["Contact", this.dialog.contact], ["Content-Type", "application/sdp"]],
      body: Buffer.from(body),
    });
    if (incoming.transaction?.respond(response) && incoming.transaction.kind === "invite-server") {
      void this.waitForAck(response, incoming.transaction.responseDestination).catch(() => undefined);
    }
  }

  private referred(incoming: IncomingRequest): void {
    const referTo = incoming.request.headers.get("Refer-To");
    if (referTo === undefined) return respond(incoming, 400, "Missing Refer-To");
    if (this.listenerCount("refer") === 0) return respond(incoming, 603, "Declined");
    respond(incoming, 202, "Accepted");
    let target = referTo;
    try {
      target = formatSipUri(parseNameAddress(referTo).uri);
    } catch {
      // Keep the header as written.
    }
    const notify = async (status: number, reason: string) => {
      const state = status >= 200 ? "terminated;reason=noresource" : "active;expires=60";
      await this.send(() =>
        this.dialog.createRequest("NOTIFY", {
          headers: [["Event", "refer"], ["Subscription-State", state], ["Content-Type", "message/sipfrag;version=2.0"]],
          body: Buffer.from(`SIP/2.0 ${status} ${reason}\r\n`),
        }),
      );
    };
    void notify(100, "Trying").catch(() => undefined);
    this.emit("refer", { target, notify });
  }

  private notified(incoming: IncomingRequest): void {
    const { request } = incoming;
    respond(incoming, 200, "OK");
    if (!/^refer\b/i.test(request.headers.get("Event") ?? "")) return;
    const status = /^SIP\/2\.0\s+(\d{3})/i.exec(request.body.toString("utf8").trimStart())?.[1];
    if (status !== undefined && Number(status) >= 200) for (const settle of this.referWaits) settle(Number(status));
  }

  /**
   * Sends a request in the dialog, made by `build` (a new CSeq and branch each call); resolves
   * with its final response, rejects on timeout or transport error. With credentials, a 401/407
   * from the trunk (the dialog's far end is the trunk's host) is answered by building the request
   * again with the Digest answers so far, once per kind (RFC 3261 22.2, 22.3).
   */
  private send(build: () => SipRequest, answers: ReadonlyArray<[string, string]> = []): Promise<SipResponse> {
    const request = build();
    for (const [name, value] of answers) request.headers.append(name, value);
    const destination = this.dialog.destination;
    return new Promise((resolve, reject) => {
      this.host.layer.sendRequest(request, destination, {
        response: (response, source) => {
          if (response.status < 200) return;
          const answer = this.info.credentials?.answer(response, request, destination, source);
          const retry = answer && !answers.some(([name]) => name === answer[0]);
          resolve(retry ? this.send(build, [...answers, answer]) : response);
        },
        failed: (reason) => reject(new SipCallError(reason === "timeout" ? "timeout" : "failed", 408, `${request.method} failed: ${reason}`)),
      });
    });
  }

  private stopAckWait(): void {
    for (const handle of this.ack?.timers ?? []) this.host.clock.clearTimeout(handle);
    this.ack = undefined;
  }
}

export function respond(incoming: IncomingRequest, status: number, reason: string, headers: ReadonlyArray<readonly [string, string]> = []): void {
  incoming.transaction?.respond(buildResponse(incoming.request, status, reason, { headers }));
}
