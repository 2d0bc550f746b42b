import { EventEmitter } from "eventemitter3";
import type WebSocket from "ws";
import type { TransportEvents } from "../transport.js";

/**
 * What every WebSocket media adapter shares: one socket, sending only while it is open,
 * `hangup` reported once when the far end goes, and `close` from our side once.
 */
export abstract class WebSocketConnection extends EventEmitter<TransportEvents> {
  private closedByUs = false;
  private hungUp = false;

  protected constructor(protected readonly socket: WebSocket) {
    super();
  }

  get closed(): boolean {
    return this.closedByUs || this.hungUp || this.socket.readyState !== this.socket.OPEN;
  }

  close(reason: string): void {
    if (this.closedByUs) return;
    this.closedByUs = true;
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(1000, reason.slice(0, 100));
  }

  /** Sends a text or binary message while the socket is open; drops it otherwise. */
  protected sendRaw(data: string | Buffer | Uint8Array): void {
    if (this.closedByUs || this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(data, { binary: typeof data !== "string" });
  }

  protected hangup(reason: string): void {
    if (this.hungUp || this.closedByUs) return;
    this.hungUp = true;
    this.emit("hangup", reason);
  }
}
