import { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../audio/audio-frame.js";
import type { CallEvent } from "../call-events.js";
import type { MediaTransport, TransportEvents } from "../transports/transport.js";
import type { CallSetup, FromWorker } from "./session-protocol.js";

/**
 * A call's media transport as seen inside a session worker: the real one stays on the main
 * thread (its socket is there), and this one turns its events into messages and back.
 * `sendEvent` does nothing here: the main thread forwards every call event it is told of.
 */
export class WorkerTransport extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol: string;
  readonly inputSampleRate: number;
  readonly outputSampleRate: number;
  readonly sendDtmf?: (digits: string) => Promise<void>;
  private isClosed: boolean;
  private nextDtmfRequest = 0;
  private readonly dtmfRequests = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();

  constructor(
    private readonly callId: string,
    transport: CallSetup["transport"],
    private readonly post: (message: FromWorker) => void,
  ) {
    super();
    this.protocol = transport.protocol;
    this.inputSampleRate = transport.inputSampleRate;
    this.outputSampleRate = transport.outputSampleRate;
    this.isClosed = transport.closed;
    if (transport.sendsDtmf) {
      this.sendDtmf = (digits) =>
        new Promise<void>((resolve, reject) => {
          const requestId = ++this.nextDtmfRequest;
          this.dtmfRequests.set(requestId, { resolve, reject });
          this.post({ type: "send_dtmf", callId, requestId, digits });
        });
    }
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** The main thread's transport reported a hang-up. */
  hungUp(reason: string): void {
    this.isClosed = true;
    this.emit("hangup", reason);
  }

  /** The main thread sent the keys of a `sendDtmf` request (or failed to). */
  dtmfSent(requestId: number, error: string | null): void {
    const request = this.dtmfRequests.get(requestId);
    this.dtmfRequests.delete(requestId);
    if (error === null) request?.resolve();
    else request?.reject(new Error(error));
  }

  sendAudio(frame: AudioFrame): void {
    // Copied, not transferred: the session records the frame after sending it.
    this.post({ type: "audio_out", callId: this.callId, samples: frame.samples, sampleRate: frame.sampleRate });
  }

  clearAudio(): void {
    this.post({ type: "clear", callId: this.callId });
  }

  sendMark(name: string): void {
    this.post({ type: "mark_out", callId: this.callId, name });
  }

  sendEvent(_event: CallEvent): void {}

  close(reason: string): void {
    this.isClosed = true;
    this.post({ type: "close_transport", callId: this.callId, reason });
  }
}
