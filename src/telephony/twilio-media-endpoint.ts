import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { WebSocketServer, type WebSocket } from "ws";
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
import { ControlledTwilioTransport } from "./carriers/twilio/controlled-twilio-transport.js";
import type { TwilioCarrier } from "./carriers/twilio/twilio-carrier.js";
import type { PendingDials } from "./pending-dials.js";
import type { TwilioStreamStart } from "./twilio-start.js";
import type { StreamGrant } from "../services/carrier-stream-tokens.js";
import { MAX_CALL_DURATION_SECONDS } from "../http/schemas/calls.js";

/** What streams opened with a carrier stream token need: the dials waiting for them, and the carrier controlling their calls. */
export interface CarrierStreams {
  dials: PendingDials;
  twilio: TwilioCarrier | undefined;
}

/** How long a Twilio stream may take to send its `start` message (Twilio sends it at once). */
const TWILIO_START_TIMEOUT_MS = 5_000;
/** Largest message accepted: Twilio's are small JSON (a `media` message is about 300 bytes; `start` carries the bounded custom parameters). */
const TWILIO_MAX_MESSAGE_BYTES = 16 * 1024;
/** How long a client refused for the pending-stream cap is told to wait. */
const PENDING_RETRY_AFTER_S = 5;

/**
 * `/media/twilio`, Twilio Media Streams. The stream authenticates in its first message: either a
 * single-use stream token (`start.customParameters.stream_token`) that Parley wrote into the
 * TwiML it answered Twilio with (its voice webhook, or a call it placed), or the account's
 * media token (`token`) in TwiML written by hand. Until then it holds a pending slot, bounded
 * per client address and in all, so unauthenticated sockets cannot pile up.
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
    private readonly carriers: CarrierStreams,
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
    const transport = new ControlledTwilioTransport(ws, (err) => this.logger.warn({ err }, "Twilio refused a call control request"));
    transport.watchReading(this.services.config.media.readTimeoutMs);
    try {
      const start = checkTwilioStart(await withTimeout(transport.waitForStart(), TWILIO_START_TIMEOUT_MS, "no start message"));
      const params = start.parameters;
      if (params.stream_token !== undefined) return await this.acceptCarrierStream(ws, transport, start, params.stream_token, authenticated);
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

  /**
   * A stream Parley asked Twilio for, with its single-use token: an outbound call's goes to the
   * dial waiting for it, an inbound call's starts the call its voice webhook routed. Either way
   * the call is then controlled through Twilio's API as well (hang-up, transfer).
   */
  private async acceptCarrierStream(ws: WebSocket, transport: ControlledTwilioTransport, start: TwilioStreamStart, token: string, authenticated: () => void): Promise<void> {
    const grant = await this.services.carrierStreams.redeem("twilio", token);
    if ("refused" in grant) {
      ws.close(CLOSE_POLICY_VIOLATION, `stream token ${grant.refused}`);
      return;
    }
    authenticated();
    if (grant.carrierCallId !== null && grant.carrierCallId !== start.callSid) {
      ws.close(CLOSE_POLICY_VIOLATION, "the stream token is for another call");
      return;
    }
    if (this.carriers.twilio) transport.controlWith(this.carriers.twilio.control(start.callSid));
    if (grant.direction === "outbound") {
      if (!grant.callId || !this.carriers.dials.deliverStream(grant.callId, transport)) ws.close(CLOSE_POLICY_VIOLATION, "no call waits for this stream");
      return;
    }
    await this.startInbound(transport, grant, start);
  }

  private async startInbound(transport: ControlledTwilioTransport, grant: StreamGrant, start: TwilioStreamStart): Promise<void> {
    const account = await this.services.accounts.find(grant.accountId);
    const agent = account && grant.agentId ? await this.services.agents.get(account.id, grant.agentId).catch(() => undefined) : undefined;
    if (!account || !agent) {
      transport.close("the number's agent is gone");
      return;
    }
    const slot = await this.runner.admit(account.id);
    const setup: LiveCallStart = {
      account,
      agent,
      direction: "inbound",
      phoneNumber: grant.phoneNumber,
      fromNumber: grant.fromNumber,
      record: true,
      maxDuration: MAX_CALL_DURATION_SECONDS,
      metadata: { twilio_call_sid: start.callSid, twilio_stream_sid: start.streamSid },
      context: {},
    };
    const call = await this.services.liveCalls.begin(setup).catch((err: unknown) => {
      slot.release();
      throw err;
    });
    await this.runner.runCall(call, setup, transport, slot);
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
