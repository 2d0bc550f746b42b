import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { WebSocketServer, type WebSocket } from "ws";
import { TwilioTransport } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { KeyedSlots } from "../core/keyed-slots.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { Services } from "../services/container.js";
import type { LiveCallStart } from "../services/live-calls.js";
import { parseContext, parseMaxDuration } from "./media-call-parameters.js";
import type { LiveCallRunner, MediaEndpoint } from "./media-endpoint.js";
import { CLOSE_POLICY_VIOLATION, refusalCloseCode } from "./refusal-close-code.js";
import { checkTwilioStart } from "./twilio-start.js";
import { refuseUpgrade } from "./upgrade-response.js";

/** How long a Twilio stream may take to send its `start` message (Twilio sends it at once). */
const TWILIO_START_TIMEOUT_MS = 5_000;
/** Largest message accepted: Twilio's are small JSON (a `media` message is about 300 bytes; `start` carries the bounded custom parameters). */
const TWILIO_MAX_MESSAGE_BYTES = 16 * 1024;
/** How long a client refused for the pending-stream cap is told to wait. */
const PENDING_RETRY_AFTER_S = 5;

/**
 * `/media/twilio`, Twilio Media Streams. The stream authenticates in its first message: the
 * account's media token in `start.customParameters.token`. Until then it holds a pending
 * slot, bounded per client address and in all, so unauthenticated sockets cannot pile up.
 */
export class TwilioMediaEndpoint implements MediaEndpoint {
  readonly path = "/media/twilio";
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: TWILIO_MAX_MESSAGE_BYTES });
  /** Sockets not yet authenticated by a valid `start`. */
  private readonly pendingStreams: KeyedSlots;

  constructor(
    private readonly services: Services,
    private readonly runner: LiveCallRunner,
    private readonly logger: Logger,
  ) {
    this.pendingStreams = new KeyedSlots(services.config.media.pendingStreams);
  }

  /** A stream holds a pending slot from the upgrade until its `start` is authenticated, or its socket closes. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, _url: URL, clientAddress: string): void {
    const slot = this.pendingStreams.take(clientAddress, this.services.config.media.pendingStreamsPerAddress);
    if ("refused" in slot) {
      const headers = { "Retry-After": String(PENDING_RETRY_AFTER_S) };
      const err =
        slot.refused === "key"
          ? new ApiError(429, "rate_limit_exceeded", "Too many media streams from this address are waiting for their start message", undefined, headers)
          : new ApiError(503, "server_busy", "Too many media streams are waiting for their start message; try again shortly", undefined, headers);
      return refuseUpgrade(socket, err);
    }
    // The socket's end releases the slot whatever happened: a handshake that never completed included.
    socket.once("close", () => slot.release());
    this.wss.handleUpgrade(req, socket, head, (ws) => void this.accept(ws, () => slot.release()));
  }

  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }

  /** `authenticated` is called once the stream's `start` carries a valid media token (it is no longer pending). */
  private async accept(ws: WebSocket, authenticated: () => void): Promise<void> {
    const transport = new TwilioTransport(ws);
    transport.watchReading(this.services.config.media.readTimeoutMs);
    try {
      const start = checkTwilioStart(await withTimeout(transport.waitForStart(), TWILIO_START_TIMEOUT_MS, "no start message"));
      const params = start.parameters;
      const account = await this.services.accounts.findByMediaToken(params.token ?? "");
      if (!account) {
        ws.close(CLOSE_POLICY_VIOLATION, "missing or invalid media token");
        return;
      }
      authenticated();
      const agent = await this.route(account, params.agent_id ?? null, start.to);
      if (!agent) {
        ws.close(CLOSE_POLICY_VIOLATION, start.to ? `no agent answers ${start.to}` : "agent_id or To is required");
        return;
      }
      const slot = await this.runner.admit(account.id);
      const setup: LiveCallStart = {
        account,
        agent,
        direction: start.to ? "inbound" : "web",
        phoneNumber: start.to,
        fromNumber: start.from,
        record: params.record !== "false",
        maxDuration: parseMaxDuration(params.max_duration ?? null),
        metadata: { twilio_call_sid: start.callSid, twilio_stream_sid: start.streamSid },
        context: parseContext(params.context ?? null),
      };
      const call = await this.services.liveCalls.begin(setup).catch((err: unknown) => {
        slot.release();
        throw err;
      });
      await this.runner.runCall(call, setup, transport, slot);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "twilio stream refused");
      ws.close(refusalCloseCode(err), (err as Error).message.slice(0, 100));
    }
  }

  /** The agent for a stream: the one named, or the dialled number's default agent. */
  private async route(account: AccountRecord, agentId: string | null, to: string | null): Promise<AgentRecord | undefined> {
    if (agentId) return this.services.agents.get(account.id, agentId).catch(() => undefined);
    if (!to) return undefined;
    const number = await this.services.phoneNumbers.findActiveByNumber(account.id, to);
    if (!number?.default_agent_id) return undefined;
    return this.services.agents.get(account.id, number.default_agent_id).catch(() => undefined);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(what)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
