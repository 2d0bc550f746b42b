import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { WebSocket } from "ws";
import { bytesToPcm16, pcm16ToBytes, type CallEvent } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { LISTEN_MODES, type ListenMode } from "../services/call-supervision.js";
import type { Services } from "../services/container.js";
import { grants } from "../services/permissions.js";
import type { MonitoredCall } from "./media-gateway.js";
import { SocketServerEndpoint } from "./socket-server-endpoint.js";
import { refuseUpgrade } from "./upgrade-response.js";
import { LISTEN_SAMPLE_RATE } from "./supervised-line.js";

/** A take-over's audio comes in chunks of a few KiB; anything bigger closes the socket (1009). */
const LISTEN_MAX_MESSAGE_BYTES = 64 * 1024;
/** Listeners one call may have at once. */
const MAX_LISTENERS_PER_CALL = 5;
/** Audio queued for a listener that does not read (about 2 s of stereo): frames past it are dropped, not buffered. */
const MAX_QUEUED_BYTES = 128 * 1024;

/** Where the gateway's live calls are found for a listener. */
export interface MonitoredCalls {
  monitored(accountId: string, callId: string): MonitoredCall | undefined;
}

/**
 * `/media/listen?call_id=...`: a supervisor hears a live call (both sides mixed, or caller left
 * and agent right with `channels=2`, 16 kHz PCM16 in binary messages every 20 ms) and its
 * transcript and state as JSON messages; with `mode=takeover` the binary messages it sends
 * (16 kHz PCM16) are what the caller hears instead of the agent, which stays silent and keeps
 * transcribing until the socket closes or `POST /v1/calls/{id}/hand-back`. Authenticated by an
 * API key of the call's account (`calls:read` to listen, `calls:write` to take over) or a
 * single-use token from `POST /v1/calls/{id}/listen-token`. Only the node running the call
 * answers; docs/supervision.md.
 */
export class ListenEndpoint extends SocketServerEndpoint {
  readonly path = "/media/listen";

  constructor(
    private readonly services: Services,
    private readonly calls: MonitoredCalls,
    private readonly logger: Logger,
  ) {
    super(LISTEN_MAX_MESSAGE_BYTES);
  }

  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
    void this.accept(req, socket, head, url);
  }

  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    const q = url.searchParams;
    let call: MonitoredCall;
    let mode: ListenMode;
    let callId: string;
    try {
      const id = q.get("call_id");
      if (!id) throw ApiError.field("invalid_request", "call_id", "is required");
      callId = id;
      const channels = q.get("channels") ?? "1";
      if (channels !== "1" && channels !== "2") throw ApiError.field("invalid_request", "channels", "must be 1 (both sides mixed) or 2 (caller left, agent right)");
      const { accountId, mode: granted } = await this.grant(req, q, callId);
      mode = granted;
      const found = this.calls.monitored(accountId, callId);
      if (!found) throw new ApiError(409, "call_not_in_progress", `Call ${callId} is not in progress on this node: listen on the node that runs it`);
      if (found.line.listenerTotal >= MAX_LISTENERS_PER_CALL) throw new ApiError(429, "rate_limit_exceeded", `A call has at most ${MAX_LISTENERS_PER_CALL} listeners at once`);
      call = found;
    } catch (err) {
      refuseUpgrade(socket, err);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, callId, call, mode, q.get("channels") === "2"));
  }

  /** Who is asking and for what: a token (used up here) or an API key of the call's account. */
  private async grant(req: IncomingMessage, q: URLSearchParams, callId: string): Promise<{ accountId: string; mode: ListenMode }> {
    const token = q.get("token");
    if (token !== null) {
      const grant = await this.services.callSupervision.redeem(token, callId);
      if (!grant) throw new ApiError(401, "invalid_listen_token", "The listen token is unknown, used, expired or for another call");
      return grant;
    }
    const mode = q.get("mode") ?? "listen";
    if (!(LISTEN_MODES as readonly string[]).includes(mode)) throw ApiError.field("invalid_request", "mode", `must be one of ${LISTEN_MODES.join(", ")}`);
    const { key, account } = await this.services.apiKeys.authenticate(req.headers.authorization?.match(/^Bearer\s+(\S+)$/i)?.[1]);
    const needed = mode === "takeover" ? "calls:write" : "calls:read";
    if (!grants(key.permissions, needed)) throw new ApiError(403, "forbidden", `This API key lacks the '${needed}' permission`);
    // Another account's call is refused as every call route refuses it (403), an unknown one 404.
    await this.services.calls.get(account.id, callId);
    return { accountId: account.id, mode: mode as ListenMode };
  }

  private serve(ws: WebSocket, callId: string, call: MonitoredCall, mode: ListenMode, stereo: boolean): void {
    const log = this.logger.child({ call_id: callId });
    let takeOver: ReturnType<MonitoredCall["takeOver"]> | undefined;
    if (mode === "takeover") {
      try {
        takeOver = call.takeOver();
      } catch {
        ws.close(4009, "the call is already taken over");
        return;
      }
    }
    log.info({ event: "call.listener", mode, channels: stereo ? 2 : 1 }, "supervisor joined the call");
    ws.send(JSON.stringify({ type: "listening", call_id: callId, mode, format: "pcm16", sample_rate: LISTEN_SAMPLE_RATE, channels: stereo ? 2 : 1 }));
    const unlisten = call.line.listen({
      stereo,
      onAudio: (pcm) => {
        // A listener that does not read loses audio rather than growing this process's memory.
        if (ws.readyState === ws.OPEN && ws.bufferedAmount < MAX_QUEUED_BYTES) ws.send(pcm16ToBytes(pcm));
      },
      onEnd: () => ws.close(1000, "call ended"),
    });
    const onEvent = (event: CallEvent) => {
      const message = listenerMessage(event);
      if (message && ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    call.session.on("event", onEvent);
    ws.on("message", (data, isBinary) => {
      // Only a take-over's socket speaks, and only audio.
      if (!takeOver || !isBinary) return;
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      if (bytes.length % 2 === 0) takeOver.send(bytesToPcm16(bytes));
    });
    ws.on("close", () => {
      unlisten();
      call.session.off("event", onEvent);
      takeOver?.end();
      log.info({ event: "call.listener_left", mode }, "supervisor left the call");
    });
  }
}

/** What a listener is told of a call event: what was said, the state, supervisors' actions and the end. */
function listenerMessage(event: CallEvent): Record<string, unknown> | null {
  switch (event.type) {
    case "transcript":
      return { type: "transcript", role: event.segment.role, content: event.segment.content, timestamp: event.segment.timestamp };
    case "state":
      return { type: "state", state: event.state };
    case "supervisor":
      return { type: "supervisor", action: event.action, ...(event.action === "say" ? { text: event.text } : {}) };
    case "ended":
      return { type: "ended", reason: event.reason };
    default:
      return null;
  }
}
