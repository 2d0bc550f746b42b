import { EventEmitter } from "eventemitter3";
import type { AudioFrame, CallEvent, MediaTransport, TransportEvents } from "../../engine/index.js";

/**
 * A media connection handed to a call session that must not end the line when the session
 * ends with a transfer: the session's `transfer` event is kept (not sent: the far end is not
 * asked to transfer yet) and its closing `transferred` leaves the line up, held for whoever
 * takes it over next (a warm transfer: the briefing of the person, then the bridge). Anything
 * else passes through. `release` hands the line back: the kept transfer goes out as it would
 * have (a cold transfer) and the line closes.
 */
export class HeldLine extends EventEmitter<TransportEvents> implements MediaTransport {
  /** The number the session transferred to; set once its `transfer` event came. */
  transferTo: string | null = null;
  /** The session has ended with the transfer: the line is ours to hand on. */
  held = false;
  sendDtmf?: (digits: string) => Promise<void>;
  /** Stops passing the line's events on (once the line is held or closed). */
  private readonly detach: () => void;
  private keepOnClose = false;

  /**
   * `deaf`: the far end's audio is not passed on (a briefing is said whole: a person saying
   * "hello?" as they pick up, or their phone's echo, must not cut it short as a barge-in).
   * `holdsTransfer`: asked when the session transfers, whether to hold the line (the agent on
   * the line transfers warm) or let the transfer through as it is (cold). Default: hold.
   */
  constructor(
    readonly line: MediaTransport,
    private readonly options: { deaf?: boolean; holdsTransfer?: () => boolean } = {},
  ) {
    super();
    const audio = (frame: AudioFrame) => void (options.deaf || this.emit("audio", frame));
    const dtmf = (digit: string) => this.emit("dtmf", digit);
    const mark = (name: string) => this.emit("mark", name);
    const hangup = (reason: string) => this.emit("hangup", reason);
    line.on("audio", audio).on("dtmf", dtmf).on("mark", mark).on("hangup", hangup);
    this.detach = () => void line.off("audio", audio).off("dtmf", dtmf).off("mark", mark).off("hangup", hangup);
    if (line.sendDtmf) this.sendDtmf = (digits) => line.sendDtmf!(digits);
  }

  get protocol(): string {
    return this.line.protocol;
  }
  get inputSampleRate(): number {
    return this.line.inputSampleRate;
  }
  get outputSampleRate(): number {
    return this.line.outputSampleRate;
  }
  get closed(): boolean {
    return this.held || this.line.closed;
  }

  sendAudio(frame: AudioFrame): void {
    if (!this.held) this.line.sendAudio(frame);
  }
  clearAudio(): void {
    if (!this.held) this.line.clearAudio();
  }
  sendMark(name: string): void {
    if (!this.held) this.line.sendMark(name);
  }

  sendEvent(event: CallEvent): void {
    if (event.type === "transfer" && event.number && (this.options.holdsTransfer?.() ?? true)) this.transferTo = event.number;
    else this.line.sendEvent(event);
  }

  /** From now on the session's close leaves the line up (the person's line after their briefing). */
  keep(): void {
    this.keepOnClose = true;
  }

  close(reason: string): void {
    if (this.held) return;
    if ((this.keepOnClose || (reason === "transferred" && this.transferTo !== null)) && !this.line.closed) {
      this.held = true;
      this.detach();
      return;
    }
    this.detach();
    this.line.close(reason);
  }

  /** Gives up holding: the kept transfer goes to the far end as a cold transfer would, and the line closes. */
  release(): void {
    this.detach();
    if (this.transferTo !== null) this.line.sendEvent({ type: "transfer", number: this.transferTo });
    this.line.close("transferred");
  }
}
