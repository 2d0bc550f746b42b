import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { WebSocket } from "ws";
import { ApiError } from "../core/api-error.js";
import type { KeyedSlots } from "../core/keyed-slots.js";
import { MAX_CALL_DURATION_SECONDS } from "../services/call-limits.js";
import type { StreamGrant } from "../services/carrier-stream-tokens.js";
import type { Services } from "../services/container.js";
import type { LiveCallStart } from "../services/live-calls.js";
import type { CarrierCallControl, ControllableTransport } from "./carrier-call-control.js";
import type { LiveCallRunner } from "./media-endpoint.js";
import type { PendingDials } from "./pending-dials.js";
import { CLOSE_POLICY_VIOLATION, refusalCloseCode } from "./refusal-close-code.js";
import { SocketServerEndpoint } from "./socket-server-endpoint.js";
import { refuseUpgrade } from "./upgrade-response.js";

/** How long a stream may take to send its first message (carriers send it at once). */
const START_TIMEOUT_MS = 5_000;
/** How long a client refused for the pending-stream cap is told to wait. */
const PENDING_RETRY_AFTER_S = 5;

/** What streams opened with a carrier stream token need: the dials waiting for them, and the carriers controlling their calls. */
export interface CarrierStreams {
  dials: PendingDials;
  /** Control of the carrier's call with this id through its API; undefined for a carrier not set up here. */
  control(carrier: string, carrierCallId: string): CarrierCallControl | undefined;
}

/**
 * What every carrier endpoint shares: the carriers' streams, and one count of the sockets
 * waiting for their first message (PARLEY_MEDIA_PENDING_STREAMS bounds them on all the carrier
 * endpoints together, not on each).
 */
export interface CarrierEndpointDeps extends CarrierStreams {
  pending: KeyedSlots;
}

/** A transport of a carrier's stream: controllable, and watched for a peer that stops reading. */
export interface CarrierStreamTransport extends ControllableTransport {
  watchReading(timeoutMs: number): void;
}

/** What a stream's first message says, checked. */
export interface CarrierStreamStart {
  /**
   * The carrier's id of the call (Twilio's CallSid, Telnyx's call_control_id), when the stream
   * says it; a Vonage stream does not, and its token knows it instead (see CarrierStreamTokens.bind).
   */
  carrierCallId: string | undefined;
  /** The single-use stream token Parley gave the carrier, when the stream carries one. */
  streamToken: string | undefined;
  /** What the call's metadata keeps of the stream (the carrier's ids). */
  metadata: Record<string, string>;
}

/**
 * The base of the carriers' media stream endpoints (`/media/twilio`, `/media/telnyx`,
 * `/media/vonage`): a stream authenticates in its first message, and until then holds a pending
 * slot, bounded per client address and in all (over the three endpoints), for at most START_TIMEOUT_MS, so unauthenticated sockets cannot pile up.
 * A stream carrying a single-use stream token (CarrierStreamTokens) is the call its token was
 * issued for: an outbound call's goes to the dial waiting for it, an inbound call's starts the
 * call the carrier's webhook routed, and either is then controlled through the carrier's API.
 * A protocol is a transport, a check of its first message and, if it has one, another way in.
 */
export abstract class CarrierMediaEndpoint<T extends CarrierStreamTransport, S extends CarrierStreamStart> extends SocketServerEndpoint {
  /** The carrier's name, as its stream tokens and numbers record it. */
  protected abstract readonly carrier: string;
  /** Sockets not yet authenticated by a valid first message (shared by the carrier endpoints). */
  private readonly pendingStreams: KeyedSlots;

  constructor(
    protected readonly services: Services,
    protected readonly runner: LiveCallRunner,
    protected readonly logger: Logger,
    protected readonly carriers: CarrierEndpointDeps,
    maxMessageBytes: number,
  ) {
    super(maxMessageBytes);
    this.pendingStreams = carriers.pending;
  }

  /** The protocol's transport over an accepted socket. */
  protected abstract transportFor(ws: WebSocket): T;

  /** The stream's first message, checked: throws (a 400 ApiError naming the field) when it does not pass. */
  protected abstract started(transport: T): Promise<S>;

  /** A stream without a stream token: refused, unless the protocol has another way in (Twilio's media token). */
  protected async acceptWithoutToken(ws: WebSocket, _transport: T, _start: S, _authenticated: () => void): Promise<void> {
    ws.close(CLOSE_POLICY_VIOLATION, "missing stream token");
  }

  /** A stream holds a pending slot from the upgrade until its first message is authenticated, or its socket closes. */
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


  /** `authenticated` is called once the stream is known to be allowed (it is no longer pending). */
  private async accept(ws: WebSocket, authenticated: () => void): Promise<void> {
    const transport = this.transportFor(ws);
    transport.watchReading(this.services.config.media.readTimeoutMs);
    try {
      const start = await withTimeout(this.started(transport), START_TIMEOUT_MS, "no start message");
      if (start.streamToken === undefined) return await this.acceptWithoutToken(ws, transport, start, authenticated);
      const grant = await this.services.carrierStreams.redeem(this.carrier, start.streamToken);
      if ("refused" in grant) {
        ws.close(CLOSE_POLICY_VIOLATION, `stream token ${grant.refused}`);
        return;
      }
      authenticated();
      if (grant.carrierCallId !== null && start.carrierCallId !== undefined && grant.carrierCallId !== start.carrierCallId) {
        ws.close(CLOSE_POLICY_VIOLATION, "the stream token is for another call");
        return;
      }
      const carrierCallId = start.carrierCallId ?? grant.carrierCallId;
      const control = carrierCallId === null ? undefined : this.carriers.control(this.carrier, carrierCallId);
      if (control) transport.controlWith(control, (err) => this.logger.warn({ err, carrier: this.carrier }, "the carrier refused a call control request"));
      if (grant.direction === "outbound") {
        if (!grant.callId || !this.carriers.dials.deliverStream(grant.callId, transport)) ws.close(CLOSE_POLICY_VIOLATION, "no call waits for this stream");
        return;
      }
      await this.startInbound(transport, grant, start);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, carrier: this.carrier }, "media stream refused");
      ws.close(refusalCloseCode(err), (err as Error).message.slice(0, 100));
    }
  }

  /** The inbound call a carrier's webhook routed to the number's default agent. */
  private async startInbound(transport: T, grant: StreamGrant, start: S): Promise<void> {
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
      metadata: start.metadata,
      context: {},
    };
    const call = await this.services.liveCalls.begin(setup).catch((err: unknown) => {
      slot.release();
      throw err;
    });
    await this.runner.runCall(call, setup, transport, slot);
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
