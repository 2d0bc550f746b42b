import type { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../audio/audio-frame.js";
import type { CallEvent } from "../call-events.js";

export interface TransportEvents {
  /** Caller audio: 20 ms frames at `inputSampleRate`, in order. */
  audio: (frame: AudioFrame) => void;
  dtmf: (digit: string) => void;
  /** The far end played up to a mark sent with `sendMark`. */
  mark: (name: string) => void;
  /** The far end hung up or the connection dropped. */
  hangup: (reason: string) => void;
}

/**
 * One call's media connection, whatever the protocol (native WebSocket, Twilio Media
 * Streams, SIP/RTP). Adapters decode at the edge but do not resample: audio stays at the
 * protocol's rate. The call session paces outgoing frames in real time.
 */
export interface MediaTransport extends EventEmitter<TransportEvents> {
  readonly protocol: string;
  readonly inputSampleRate: number;
  readonly outputSampleRate: number;
  /**
   * The connection is over: the far end hung up (whether or not anyone was listening for
   * `hangup` yet), it dropped, or `close` was called. A call session started on a closed
   * transport ends at once.
   */
  readonly closed: boolean;
  /** Sends one 20 ms agent frame at `outputSampleRate`. */
  sendAudio(frame: AudioFrame): void;
  /** Drops agent audio the far end has buffered but not played (barge-in). */
  clearAudio(): void;
  /** Asks to be told (`mark` event) when the far end has played everything sent so far. */
  sendMark(name: string): void;
  /**
   * Sends key presses (`0`-`9`, `*`, `#`) to the far end, resolving once they are out: SIP sends
   * RFC 4733 events. Absent on protocols that cannot send them (the media streams).
   */
  sendDtmf?(digits: string): Promise<void>;
  /** Forwards a call event to protocols that carry them (the native one); others ignore it. */
  sendEvent(event: CallEvent): void;
  /** Ends the media connection (the call is over). */
  close(reason: string): void;
}
