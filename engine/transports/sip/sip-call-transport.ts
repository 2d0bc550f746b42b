import { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../../audio/audio-frame.js";
import type { CallEvent } from "../../call-events.js";
import type { MediaTransport, TransportEvents } from "../transport.js";
import type { SipCall } from "./sip-call.js";

const RTP_RATE = 8000;
/** How long the closing BYE waits for a transfer's NOTIFY. */
const REFER_WAIT_MS = 5000;

/**
 * MediaTransport over an established SIP call: G.711 RTP at 8 kHz both ways (decoded and
 * encoded by the RtpSession), RFC 4733 DTMF both ways, `hangup` when the far end sends BYE.
 *
 * RTP has no playback feedback, and nothing is queued on our side (each frame goes out as one
 * packet when `sendAudio` is called; the call session paces them). So `sendMark` reports the
 * mark as soon as every frame sent before it has been handed to the socket, which is the
 * closest the protocol allows: it says "sent", not "played". `clearAudio` only starts a new
 * talkspurt (the far end's jitter buffer keeps what it already has).
 *
 * A transfer (the agent handing the caller to `transfer_number`) is a REFER to
 * `sip:<number>@<far end's host>` (RFC 3515); the BYE that ends our side waits for its outcome
 * (at most REFER_WAIT_MS), so the far end is not hung up before it has taken the call over.
 */
export class SipCallTransport extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol = "sip";
  readonly inputSampleRate = RTP_RATE;
  readonly outputSampleRate = RTP_RATE;
  /** BYE received, or `close` called. */
  private ended = false;
  private transfer: Promise<unknown> | undefined;

  constructor(readonly call: SipCall) {
    super();
    call.on("audio", (frame) => {
      if (!this.ended) this.emit("audio", frame);
    });
    call.on("dtmf", (digit) => {
      if (!this.ended) this.emit("dtmf", digit);
    });
    call.on("hangup", (reason) => {
      if (this.ended) return;
      this.ended = true;
      this.emit("hangup", reason);
    });
  }

  get closed(): boolean {
    return this.ended || !this.call.active;
  }

  sendAudio(frame: AudioFrame): void {
    if (frame.sampleRate !== RTP_RATE) throw new Error(`SIP audio must be 8000 Hz, got ${frame.sampleRate}`);
    if (!this.ended) this.call.sendAudio(frame);
  }

  clearAudio(): void {
    this.call.rtp.clearAudio();
  }

  /** RFC 4733 events, one digit after the other; rejects when the far end did not negotiate telephone-event. */
  sendDtmf(digits: string): Promise<void> {
    if (this.ended) return Promise.reject(new Error("the call has ended"));
    return this.call.sendDtmf(digits);
  }

  sendMark(name: string): void {
    // Frames are sent synchronously, so every earlier frame is already out; report on the next turn.
    queueMicrotask(() => {
      if (!this.ended) this.emit("mark", name);
    });
  }

  sendEvent(event: CallEvent): void {
    // Of the call's events, SIP carries only the hand-off of a transfer.
    if (event.type !== "transfer" || !event.number || this.ended) return;
    const host = this.call.dialog.destination;
    this.transfer = this.call.refer(`sip:${event.number}@${host.address}:${host.port}`, { timeoutMs: REFER_WAIT_MS }).catch(() => undefined);
  }

  /** Ends the call: BYE when it is still up. */
  close(_reason: string): void {
    if (this.ended) return;
    this.ended = true;
    void (this.transfer ?? Promise.resolve()).then(() => this.call.hangUp());
  }
}
