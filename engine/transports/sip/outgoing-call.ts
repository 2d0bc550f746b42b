import { randomInt } from "node:crypto";
import { EventEmitter } from "eventemitter3";
import type { TimerHandle } from "../../audio/clock.js";
import type { CallSetupHost } from "./call-setup-host.js";
import type { DigestCredentials } from "./digest-auth.js";
import type { InviteClientTransaction } from "./invite-client-transaction.js";
import type { RtpSession } from "./rtp-session.js";
import { createOffer, readAnswer, type LocalMedia } from "./sdp-negotiation.js";
import { parseSdp, writeSdp } from "./sdp.js";
import { ALLOWED_METHODS, SipCall, SipCallError } from "./sip-call.js";
import { createCallId, createTag, SipDialog, uriDestination, viaFor } from "./sip-dialog.js";
import { SipHeaders } from "./sip-headers.js";
import { parseNameAddress } from "./sip-header-values.js";
import { getCSeq, type SipRequest, type SipResponse } from "./sip-message.js";
import { parseSipUri } from "./sip-uri.js";
import type { ClientTransactionUser, SipAddress } from "./transaction.js";
import { TrunkCredentials } from "./trunk-credentials.js";

/** What an OutgoingCall needs from the user agent: setting up a call, and resolving the target's name. */
export interface OutgoingCallHost extends CallSetupHost {
  /** The address `host` (a name or an address) resolves to, for the user agent's socket family. */
  resolve(host: string): Promise<string>;
}

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
    private readonly ua: OutgoingCallHost,
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
