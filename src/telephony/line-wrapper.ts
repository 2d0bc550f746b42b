import { EventEmitter } from "eventemitter3";
import type { AudioFrame, CallEvent, MediaTransport, TransportEvents } from "../../engine/index.js";

/**
 * A media connection handed to a call session in place of the real one (`line`): the line's
 * events and the session's audio pass through unless a subclass says otherwise. The line's
 * audio and hang-up go through `fromLine` and `lineHungUp`, which a subclass may extend (to
 * tap the audio, drop it, or wind down first). See HeldLine and SupervisedLine.
 */
export abstract class LineWrapper extends EventEmitter<TransportEvents> implements MediaTransport {
  sendDtmf?: (digits: string) => Promise<void>;
  /** Stops passing the line's events on. */
  protected readonly detach: () => void;

  constructor(readonly line: MediaTransport) {
    super();
    const audio = (frame: AudioFrame) => this.fromLine(frame);
    const dtmf = (digit: string) => this.emit("dtmf", digit);
    const mark = (name: string) => this.emit("mark", name);
    const hangup = (reason: string) => this.lineHungUp(reason);
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
    return this.line.closed;
  }

  sendAudio(frame: AudioFrame): void {
    this.line.sendAudio(frame);
  }
  clearAudio(): void {
    this.line.clearAudio();
  }
  sendMark(name: string): void {
    this.line.sendMark(name);
  }
  sendEvent(event: CallEvent): void {
    this.line.sendEvent(event);
  }
  close(reason: string): void {
    this.line.close(reason);
  }

  /** The caller's audio from the line: passed on to the session. */
  protected fromLine(frame: AudioFrame): void {
    this.emit("audio", frame);
  }

  /** The line hung up: the session is told. */
  protected lineHungUp(reason: string): void {
    this.emit("hangup", reason);
  }
}
