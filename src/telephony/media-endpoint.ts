import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { MediaTransport } from "../../engine/index.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { LiveCallStart } from "../services/live-calls.js";
import type { EngineSlot } from "./engine-share.js";

/**
 * Where live calls run (the MediaGateway): an endpoint asks it for an engine slot before it
 * accepts a call, and hands it the started call.
 */
export interface LiveCallRunner {
  /** An engine slot for a new call of the account, or an ApiError (429 past its share, 503 at capacity). */
  admit(accountId: string): Promise<EngineSlot>;
  /** Runs the call until it ends, then stores and bills it; gives the slot back. Never rejects. */
  runCall(call: CallRecord, setup: LiveCallStart, transport: MediaTransport, slot: EngineSlot): Promise<void>;
}

/**
 * One media protocol's WebSocket endpoint: it authenticates an upgrade, completes the
 * handshake and hands the call to the runner; it runs no call itself. The gateway has
 * already checked that calls are accepted and the client's upgrade rate.
 */
export interface MediaEndpoint {
  /** The request path it answers, e.g. `/media/ws`. */
  readonly path: string;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL, clientAddress: string): void;
  /** Drops its open sockets (their calls have been ended by the gateway). */
  close(): void;
}
