import { EventEmitter } from "eventemitter3";
import type { CallSetupHost } from "./call-setup-host.js";
import type { InviteServerTransaction } from "./invite-server-transaction.js";
import { SdpError } from "./sdp-error.js";
import { answerOffer, createOffer, readAnswer, type NegotiatedMedia } from "./sdp-negotiation.js";
import { parseSdp, writeSdp } from "./sdp.js";
import { ALLOWED_METHODS, SipCall, SipCallError } from "./sip-call.js";
import { createTag, SipDialog } from "./sip-dialog.js";
import { buildResponse, getCallId, getFrom, getTo, type SipRequest } from "./sip-message.js";
import { parseSipUri } from "./sip-uri.js";
import type { SipAddress } from "./transaction.js";

/** What an IncomingCall needs from the user agent: setting up a call, and hearing when the INVITE is decided. */
export interface IncomingCallHost extends CallSetupHost {
  /** The INVITE got its final answer (or was cancelled): it no longer counts as waiting, nor can a CANCEL find it. */
  settled(call: IncomingCall): void;
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
    private readonly ua: IncomingCallHost,
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

  /** Refuses the call; `headers` go into the response (a 503's `Retry-After`, RFC 3261 section 21.5.4). */
  reject(status = 486, reason = "Busy Here", headers: ReadonlyArray<readonly [string, string]> = []): void {
    if (this.current !== "pending") throw new Error(`cannot reject a call that is ${this.current}`);
    this.current = "rejected";
    this.ua.settled(this);
    this.send(status, reason, headers);
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

  private send(status: number, reason: string, headers: ReadonlyArray<readonly [string, string]> = []): void {
    this.transaction.respond(buildResponse(this.request, status, reason, { toTag: this.tag, headers }));
  }
}
