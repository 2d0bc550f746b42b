import type { AudioFrame, CallEvent, MediaTransport } from "../../engine/index.js";
import { LineWrapper } from "./line-wrapper.js";

/**
 * A media connection handed to a call session that must not end the line when the session
 * ends with a transfer: the session's `transfer` event is kept (not sent: the far end is not
 * asked to transfer yet) and its closing `transferred` leaves the line up, held for whoever
 * takes it over next (a warm transfer: the briefing of the person, then the bridge). Anything
 * else passes through. `release` hands the line back: the kept transfer goes out as it would
 * have (a cold transfer) and the line closes.
 */
export class HeldLine extends LineWrapper {
  /** The number the session transferred to; set once its `transfer` event came. */
  transferTo: string | null = null;
  /** The session has ended with the transfer: the line is ours to hand on. */
  held = false;
  private keepOnClose = false;

  /**
   * `deaf`: the far end's audio is not passed on (a briefing is said whole: a person saying
   * "hello?" as they pick up, or their phone's echo, must not cut it short as a barge-in).
   * `holdsTransfer`: asked when the session transfers, whether to hold the line (the agent on
   * the line transfers warm) or let the transfer through as it is (cold). Default: hold.
   */
  constructor(
    line: MediaTransport,
    private readonly options: { deaf?: boolean; holdsTransfer?: () => boolean } = {},
  ) {
    super(line);
  }

  protected override fromLine(frame: AudioFrame): void {
    if (!this.options.deaf) super.fromLine(frame);
  }

  override get closed(): boolean {
    return this.held || this.line.closed;
  }

  override sendAudio(frame: AudioFrame): void {
    if (!this.held) this.line.sendAudio(frame);
  }
  override clearAudio(): void {
    if (!this.held) this.line.clearAudio();
  }
  override sendMark(name: string): void {
    if (!this.held) this.line.sendMark(name);
  }

  override sendEvent(event: CallEvent): void {
    if (event.type === "transfer" && event.number && (this.options.holdsTransfer?.() ?? true)) this.transferTo = event.number;
    else this.line.sendEvent(event);
  }

  /** From now on the session's close leaves the line up (the person's line after their briefing). */
  keep(): void {
    this.keepOnClose = true;
  }

  override close(reason: string): void {
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
