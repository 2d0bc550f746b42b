import type { IncomingMessage } from "node:http";
import { EventEmitter } from "eventemitter3";
import WebSocket from "ws";
import { pcm16ToBytes } from "../../../audio/pcm16.js";
import { AsrError } from "../asr-error.js";
import { encodeControl, parseServerMessage, type DeepgramControlType, type DeepgramServerEvent } from "./deepgram-protocol.js";
import { isRetryableStatus } from "../../provider-error.js";

export interface DeepgramConnectOptions {
  /** The full `ws(s)://.../v1/listen?...` address. */
  url: string;
  /** `Authorization` when a key is configured. */
  headers: Record<string, string>;
  connectTimeoutMs: number;
  keepAliveMs: number;
  signal: AbortSignal;
}

export interface DeepgramClose {
  code: number;
  reason: string;
}

interface DeepgramConnectionEvents {
  message: (event: DeepgramServerEvent) => void;
  /** Once, when the socket is closed for any reason (by either side, or lost). */
  close: (close: DeepgramClose) => void;
}

/** How long `close()` waits for the server to close after `CloseStream` before cutting the socket. */
const CLOSE_GRACE_MS = 1000;

function unavailable(message: string, retryable: boolean, cause?: unknown): AsrError {
  return new AsrError("recognizer_unavailable", message, { retryable, cause });
}

/**
 * One open `/v1/listen` socket: sends audio and control messages, emits the server's messages
 * and its close. Sends `KeepAlive` whenever no audio has gone out for `keepAliveMs`, so the
 * stream survives the caller's (and the agent's) silences.
 */
export class DeepgramConnection extends EventEmitter<DeepgramConnectionEvents> {
  private readonly keepAlive: NodeJS.Timeout;
  private closing: Promise<void> | undefined;
  private closeInfo: DeepgramClose | undefined;

  private constructor(
    private readonly socket: WebSocket,
    keepAliveMs: number,
  ) {
    super();
    this.keepAlive = setInterval(() => this.sendControl("KeepAlive"), keepAliveMs).unref();
    socket.on("message", (data, isBinary) => {
      if (!isBinary) this.emit("message", parseServerMessage(data.toString()));
    });
    socket.once("close", (code, reason) => {
      clearInterval(this.keepAlive);
      this.closeInfo = { code, reason: reason.toString() };
      this.emit("close", this.closeInfo);
    });
    // A socket error is followed by its close, which is what the owner acts on.
    socket.on("error", () => undefined);
  }

  /**
   * Opens the socket. Rejects with `recognizer_unavailable`: retryable on a timeout, an abort,
   * a network failure or a status isRetryableStatus allows (408, 429, 5xx); not retryable for
   * any other status (a refused key, 401 or 403, says so in the message).
   */
  static connect(options: DeepgramConnectOptions): Promise<DeepgramConnection> {
    const { signal } = options;
    if (signal.aborted) return Promise.reject(unavailable("opening the Deepgram stream was aborted", true, signal.reason));
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(options.url, { headers: options.headers, perMessageDeflate: false });
      let failure: AsrError | undefined;
      const fail = (error: AsrError) => {
        failure ??= error;
        socket.terminate();
      };
      const timer = setTimeout(
        () => fail(unavailable(`the Deepgram stream did not open within ${options.connectTimeoutMs} ms`, true)),
        options.connectTimeoutMs,
      );
      const onAbort = () => fail(unavailable("opening the Deepgram stream was aborted", true, signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        socket.off("open", onOpen).off("error", onError).off("close", onClose).off("unexpected-response", onResponse);
      };
      const onOpen = () => {
        settle();
        resolve(new DeepgramConnection(socket, options.keepAliveMs));
      };
      const onResponse = (_request: unknown, response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        const detail = response.headers["dg-error"];
        response.resume();
        const refused = status === 401 || status === 403;
        const message = `the Deepgram service answered the stream request with HTTP ${status}${detail ? ` (${String(detail)})` : ""}${refused ? ": check the API key" : ""}`;
        fail(unavailable(message, isRetryableStatus(status)));
      };
      const onError = (error: Error) => {
        failure ??= unavailable(`could not open the Deepgram stream: ${error.message}`, true, error);
      };
      const onClose = () => {
        settle();
        reject(failure ?? unavailable("the Deepgram stream closed while opening", true));
      };
      socket.on("open", onOpen).on("error", onError).on("close", onClose).on("unexpected-response", onResponse);
    });
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** How the socket closed; undefined while it is open or closing. */
  get closed(): DeepgramClose | undefined {
    return this.closeInfo;
  }

  /** Sends PCM16 little-endian bytes; false when the socket is no longer open (its `close` says why). */
  sendAudio(samples: Int16Array): boolean {
    if (!this.isOpen) return false;
    // ws copies a Buffer it did not allocate before masking it, so the frame's samples stay as they are.
    this.socket.send(pcm16ToBytes(samples), { binary: true });
    this.keepAlive.refresh();
    return true;
  }

  sendControl(type: DeepgramControlType): boolean {
    if (!this.isOpen) return false;
    this.socket.send(encodeControl(type), { binary: false });
    return true;
  }

  /** Sends `CloseStream` and closes the socket; resolves once it is closed. Idempotent. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      clearInterval(this.keepAlive);
      if (this.socket.readyState === WebSocket.CLOSED) return resolve();
      const grace = setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
      this.socket.once("close", () => {
        clearTimeout(grace);
        resolve();
      });
      this.sendControl("CloseStream");
      // Closed from this side as well: the result of the flush is of no use to anyone now.
      if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
    });
    return this.closing;
  }
}
