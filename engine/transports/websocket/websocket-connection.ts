import { EventEmitter } from "eventemitter3";
import type WebSocket from "ws";
import type { TransportEvents } from "../transport.js";

/**
 * Agent audio waiting unsent towards a slow peer is bounded to this much playing time: past
 * it, frames are dropped (the caller hears a gap rather than a delay that keeps growing).
 */
export const MAX_BUFFERED_AUDIO_MS = 2000;
/**
 * Anything waiting unsent past this many bytes means the peer has stopped reading: it is cut
 * off (`hangup` with reason `client_not_reading`), so a stalled client cannot make the server
 * hold its messages without bound.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** The hang-up reason of a peer cut off for not reading (also a call end reason). */
export const NOT_READING = "client_not_reading";

/**
 * What every WebSocket media adapter shares: one socket, sending only while it is open and
 * the peer keeps up, `hangup` reported once when the far end goes, and `close` from our side
 * once.
 */
export abstract class WebSocketConnection extends EventEmitter<TransportEvents> {
  private closedByUs = false;
  private hungUp = false;
  private readonly maxBufferedAudioBytes: number;
  private readWatch: NodeJS.Timeout | undefined;

  /** `audioBytesPerSecond`: what one second of agent audio takes on the wire in this protocol. */
  protected constructor(
    protected readonly socket: WebSocket,
    audioBytesPerSecond: number,
  ) {
    super();
    this.maxBufferedAudioBytes = (audioBytesPerSecond * MAX_BUFFERED_AUDIO_MS) / 1000;
  }

  get closed(): boolean {
    return this.closedByUs || this.hungUp || this.socket.readyState !== this.socket.OPEN;
  }

  /**
   * Cuts the peer off (`hangup` with `client_not_reading`, socket destroyed) once it has left a
   * ping unanswered for `timeoutMs`: a ping is sent whenever none is outstanding, checked every
   * quarter of `timeoutMs`, so a peer that stops reading is cut off between `timeoutMs` and
   * 1.25 times it later. The pong can only come once the peer has read everything sent before
   * the ping, so this catches a stalled reader whatever the kernel's socket buffers absorb (and
   * a peer gone without a FIN). 0 watches nothing.
   */
  watchReading(timeoutMs: number): void {
    if (timeoutMs <= 0 || this.readWatch || this.closed) return;
    let pingedAt: number | undefined;
    this.socket.on("pong", () => (pingedAt = undefined));
    this.readWatch = setInterval(
      () => {
        if (this.closed) return this.stopWatching();
        if (pingedAt === undefined) {
          pingedAt = Date.now();
          this.socket.ping();
        } else if (Date.now() - pingedAt >= timeoutMs) this.cutOff();
      },
      Math.max(50, timeoutMs / 4),
    );
    this.readWatch.unref();
    this.socket.once("close", () => this.stopWatching());
  }

  /** Ends the connection from our side; `code` is the WebSocket close code (1000: normal closure). */
  close(reason: string, code = 1000): void {
    this.stopWatching();
    if (this.closedByUs) return;
    this.closedByUs = true;
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(code, reason.slice(0, 100));
  }

  /** Sends one agent audio message, or drops it while the peer is MAX_BUFFERED_AUDIO_MS behind. */
  protected sendAudioMessage(data: string | Buffer | Uint8Array): void {
    if (this.socket.bufferedAmount > this.maxBufferedAudioBytes) return;
    this.sendRaw(data);
  }

  /** Sends a text or binary message while the socket is open; drops it otherwise. */
  protected sendRaw(data: string | Buffer | Uint8Array): void {
    if (this.closedByUs || this.socket.readyState !== this.socket.OPEN) return;
    if (this.socket.bufferedAmount > MAX_BUFFERED_BYTES) return this.cutOff();
    this.socket.send(data, { binary: typeof data !== "string" });
  }

  /** The peer is not reading: the call ends (`client_not_reading`) and the socket is destroyed, with whatever it still holds. */
  private cutOff(): void {
    this.stopWatching();
    this.hangup(NOT_READING);
    this.socket.terminate();
  }

  private stopWatching(): void {
    clearInterval(this.readWatch);
    this.readWatch = undefined;
  }

  protected hangup(reason: string): void {
    if (this.hungUp || this.closedByUs) return;
    this.hungUp = true;
    this.emit("hangup", reason);
  }
}
