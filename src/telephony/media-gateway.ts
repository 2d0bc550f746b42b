import type { IncomingMessage, Server } from "node:http";
import path from "node:path";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { WebSocketServer, type WebSocket } from "ws";
import {
  callLatency,
  NATIVE_FORMATS,
  NATIVE_OPUS_RATES,
  NATIVE_PCM_RATES,
  NativeTransport,
  TwilioTransport,
  type CallEndReason,
  type CallSession,
  type Engine,
  type MediaTransport,
  type NativeFormat,
} from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { clientAddressKey } from "../core/client-address-key.js";
import { FixedWindowRateLimiter, rateLimitExceeded } from "../http/middleware/rate-limiter.js";
import { MAX_CALL_DURATION_SECONDS } from "../http/schemas/calls.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { Services } from "../services/container.js";
import type { LiveCallEnd, LiveCallStart } from "../services/live-calls.js";
import type { LiveCallControl } from "../services/calls.js";
import { grants } from "../services/permissions.js";
import { toAgentSettings } from "./agent-settings.js";
import { CallTools } from "./call-tools.js";
import { reminderCall } from "./reminder-opening.js";
import { CREDIT_EXHAUSTED_LINE, CreditWatch } from "./credit-watch.js";
import { EngineShare, type EngineSlot } from "./engine-share.js";
import { KeyedSlots } from "../core/keyed-slots.js";
import { CLOSE_POLICY_VIOLATION, refusalCloseCode } from "./refusal-close-code.js";
import { checkTwilioStart } from "./twilio-start.js";
import { refuseUpgrade } from "./upgrade-response.js";

/** Waits before storing a call's end again after a database error. */
const STORE_END_RETRY_MS = [500, 2_000, 10_000];
/** How often live calls are marked alive: a crashed call's duration is known to within this. */
const HEARTBEAT_MS = 15_000;
/** How long a Twilio stream may take to send its `start` message (Twilio sends it at once). */
const TWILIO_START_TIMEOUT_MS = 5_000;
/**
 * Largest WebSocket message accepted, per endpoint; a larger one closes the connection (1009).
 * Native audio is 20 ms frames (640 bytes of 16 kHz PCM16, 1,920 at 48 kHz) or microphone
 * chunks of a few KiB: 64 KiB leaves ample room. Twilio's messages are small JSON (a `media`
 * message is about 300 bytes; `start` carries the bounded custom parameters).
 */
const NATIVE_MAX_MESSAGE_BYTES = 64 * 1024;
const TWILIO_MAX_MESSAGE_BYTES = 16 * 1024;
/** How long a client refused for the pending-stream cap is told to wait. */
const PENDING_RETRY_AFTER_S = 5;

/** Where call recordings are written: `<data dir>/recordings/<call id>.wav`. */
export function recordingsDir(dataDir: string): string {
  return path.join(dataDir, "recordings");
}

/** A call's setup: web (native protocol), inbound (a Twilio stream or SIP call to a number) or outbound (dialled by a carrier). */
export type CallSetup = LiveCallStart;

/**
 * Media WebSocket endpoints: `/media/ws` (Parley's native protocol, API key in the
 * Authorization header) and `/media/twilio` (Twilio Media Streams, the account's media token
 * in `start.customParameters.token`). Each connection becomes a call row and an engine call
 * session; at its end the call is closed and billed.
 */
export class MediaGateway implements LiveCallControl {
  private readonly nativeWss = new WebSocketServer({ noServer: true, maxPayload: NATIVE_MAX_MESSAGE_BYTES });
  private readonly twilioWss = new WebSocketServer({ noServer: true, maxPayload: TWILIO_MAX_MESSAGE_BYTES });
  /** Upgrades per client address, counted before any authentication. */
  private readonly upgrades = new FixedWindowRateLimiter();
  /** `/media/twilio` sockets not yet authenticated by a valid `start`. */
  private readonly pendingStreams: KeyedSlots;
  /** Live calls: the session and the promise that settles once its end is stored. */
  private readonly live = new Map<string, { session: CallSession; stored: Promise<void> }>();
  private readonly recordingsDir: string;
  /** Marks live calls alive in the database, so a crash leaves their last moment known (see LiveCallsService.recoverInterrupted). */
  private readonly heartbeat: NodeJS.Timeout;
  private accepting = true;
  private readonly endListeners: Array<(accountId: string) => void> = [];
  /** The engine's call slots, shared fairly between accounts. */
  private readonly share: EngineShare;

  constructor(
    private readonly services: Services,
    private readonly engine: Engine,
    private readonly logger: Logger,
  ) {
    this.recordingsDir = recordingsDir(services.config.dataDir);
    this.share = new EngineShare({ capacity: engine.capacity, sharePercent: services.config.engine.accountSharePercent, countAccounts: () => services.accounts.count() });
    this.pendingStreams = new KeyedSlots(services.config.media.pendingStreams);
    this.heartbeat = setInterval(() => {
      if (this.live.size > 0) void services.liveCalls.heartbeat([...this.live.keys()]).catch((err: unknown) => logger.error({ err }, "call heartbeat failed"));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  attach(server: Server): void {
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (!this.accepting) return refuseUpgrade(socket, new ApiError(503, "shutting_down", "The service is shutting down: no new calls; try again shortly"));
      const address = clientAddressKey(req.socket.remoteAddress);
      const decision = this.upgrades.hit(address, this.services.config.media.upgradesPerMinute);
      if (!decision.allowed) return refuseUpgrade(socket, rateLimitExceeded(decision, "WebSocket upgrades"));
      if (url.pathname === "/media/ws") void this.acceptNative(req, socket, head, url);
      else if (url.pathname === "/media/twilio") this.upgradeTwilio(req, socket, head, address);
      else refuseUpgrade(socket, new ApiError(404, "not_found", `No WebSocket endpoint ${url.pathname}`));
    });
  }

  /** A Twilio stream holds a pending slot from the upgrade until its `start` is authenticated, or its socket closes. */
  private upgradeTwilio(req: IncomingMessage, socket: Duplex, head: Buffer, address: string): void {
    const slot = this.pendingStreams.take(address, this.services.config.media.pendingStreamsPerAddress);
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
    this.twilioWss.handleUpgrade(req, socket, head, (ws) => void this.acceptTwilio(ws, () => slot.release()));
  }

  /**
   * An engine slot for a new call of `accountId`, taken before its row is created: an ApiError
   * (429 past the account's share, 503 past the engine's capacity) when there is none. The
   * slot goes to `runCall`, which gives it back once the call's end is stored.
   */
  admit(accountId: string): Promise<EngineSlot> {
    return this.share.take(accountId);
  }

  /** Called with the account of every call once its end is stored (a concurrent-call slot is free). */
  onCallEnded(listener: (accountId: string) => void): void {
    this.endListeners.push(listener);
  }

  /** Hangs up one live call; resolves once its end is stored (false: not live in this process). */
  async hangUp(callId: string): Promise<boolean> {
    const call = this.live.get(callId);
    if (!call) return false;
    await call.session.stop("stopped");
    await call.stored;
    return true;
  }

  /** The engine's call slots held now: calls being admitted or running, until each one's end is stored. */
  get slotsHeld(): number {
    return this.share.held();
  }

  /** Takes no new calls from now on; resolves once the live calls have ended, or after `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    this.accepting = false;
    const deadline = Date.now() + graceMs;
    while (this.live.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, Math.min(100, deadline - Date.now())));
  }

  /** Ends every live call still running (stored and billed as it stands) and closes the endpoints. */
  async close(): Promise<void> {
    this.accepting = false;
    clearInterval(this.heartbeat);
    await Promise.allSettled([...this.live.keys()].map((callId) => this.hangUp(callId)));
    for (const wss of [this.nativeWss, this.twilioWss]) {
      for (const client of wss.clients) client.terminate();
      wss.close();
    }
  }

  private async acceptNative(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    let setup: CallSetup;
    let slot: EngineSlot | undefined;
    let format: NativeFormat;
    let sampleRate: number;
    try {
      const { key, account } = await this.services.apiKeys.authenticate(req.headers.authorization?.match(/^Bearer\s+(\S+)$/i)?.[1]);
      if (!grants(key.permissions, "calls:write")) throw new ApiError(403, "forbidden", "This API key lacks the 'calls:write' permission");
      const q = url.searchParams;
      format = (q.get("format") ?? "pcm16") as NativeFormat;
      if (!(NATIVE_FORMATS as readonly string[]).includes(format)) throw ApiError.field("invalid_request", "format", `must be one of ${NATIVE_FORMATS.join(", ")}`);
      const rates: readonly number[] = format === "opus" ? NATIVE_OPUS_RATES : NATIVE_PCM_RATES;
      sampleRate = Number(q.get("sample_rate") ?? 16000);
      if (!rates.includes(sampleRate)) throw ApiError.field("invalid_request", "sample_rate", `must be one of ${rates.join(", ")} for ${format}`);
      const agentId = q.get("agent_id");
      if (!agentId) throw ApiError.field("invalid_request", "agent_id", "is required");
      const agent = await this.services.agents.get(account.id, agentId);
      setup = {
        account,
        agent,
        direction: "web",
        phoneNumber: null,
        fromNumber: null,
        record: q.get("record") !== "false",
        maxDuration: parseMaxDuration(q.get("max_duration")),
        metadata: {},
        context: parseContext(q.get("context")),
      };
      // Refusals known now are answered over HTTP; the call row is made only once the socket is open.
      await this.services.liveCalls.checkStartable(setup);
      slot = await this.admit(account.id);
    } catch (err) {
      refuseUpgrade(socket, err);
      return;
    }
    // A handshake that never completes gives the engine slot back with its socket, also one
    // whose socket was already destroyed (reset) while the call was being admitted.
    const held = slot;
    const abandon = () => held.release();
    socket.once("close", abandon);
    if (socket.destroyed) abandon();
    this.nativeWss.handleUpgrade(req, socket, head, (ws) => {
      socket.off("close", abandon);
      void this.startNative(ws, setup, { format, sampleRate }, held);
    });
  }

  /**
   * A native call whose socket is open: its row is made now, so a handshake that never
   * completes leaves none. A refusal here (the last call slot or the credit taken since the
   * check before the upgrade) is told over the socket.
   */
  private async startNative(ws: WebSocket, setup: CallSetup, options: { format: NativeFormat; sampleRate: number }, slot: EngineSlot): Promise<void> {
    const transport = new NativeTransport(ws, options);
    let call: CallRecord;
    try {
      call = await this.services.liveCalls.begin(setup);
    } catch (err) {
      slot.release();
      if (!(err instanceof ApiError)) this.logger.error({ err }, "native call not started");
      const error = err instanceof ApiError ? err : new ApiError(500, "internal_error", "Internal error");
      transport.refuse(error.code, error.message, refusalCloseCode(error));
      return;
    }
    transport.sendConnected(call.id);
    await this.runCall(call, setup, transport, slot);
  }

  /** `authenticated` is called once the stream's `start` carries a valid media token (it is no longer pending). */
  private async acceptTwilio(ws: WebSocket, authenticated: () => void): Promise<void> {
    const transport = new TwilioTransport(ws);
    try {
      const start = checkTwilioStart(await withTimeout(transport.waitForStart(), TWILIO_START_TIMEOUT_MS, "no start message"));
      const params = start.parameters;
      const account = await this.services.accounts.findByMediaToken(params.token ?? "");
      if (!account) {
        ws.close(CLOSE_POLICY_VIOLATION, "missing or invalid media token");
        return;
      }
      authenticated();
      const agent = await this.routeTwilioCall(account, params.agent_id ?? null, start.to);
      if (!agent) {
        ws.close(CLOSE_POLICY_VIOLATION, start.to ? `no agent answers ${start.to}` : "agent_id or To is required");
        return;
      }
      const slot = await this.admit(account.id);
      const setup: CallSetup = {
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
      await this.runCall(call, setup, transport, slot);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, "twilio stream refused");
      ws.close(refusalCloseCode(err), (err as Error).message.slice(0, 100));
    }
  }

  /** The agent for a Twilio stream: the one named, or the dialled number's default agent. */
  private async routeTwilioCall(account: AccountRecord, agentId: string | null, to: string | null): Promise<AgentRecord | undefined> {
    if (agentId) return this.services.agents.get(account.id, agentId).catch(() => undefined);
    if (!to) return undefined;
    const number = await this.services.phoneNumbers.findActiveByNumber(account.id, to);
    if (!number?.default_agent_id) return undefined;
    return this.services.agents.get(account.id, number.default_agent_id).catch(() => undefined);
  }

  /**
   * Runs a started call (its row `in_progress`) on `transport` until it ends, then stores and
   * bills it. Never rejects: whatever goes wrong in one call (a database error storing its
   * end, an agent that cannot be loaded) ends that call and is logged; the other live calls
   * and the process go on.
   */
  async runCall(call: CallRecord, setup: CallSetup, transport: MediaTransport, slot: EngineSlot): Promise<void> {
    const log = this.logger.child({ callId: call.id });
    let stored!: () => void;
    let summary: LiveCallEnd;
    try {
      const session = await this.createSession(call, setup, transport, log);
      this.live.set(call.id, { session, stored: new Promise<void>((resolve) => (stored = resolve)) });
      let transferNumber: string | null = null;
      session.on("event", (event) => {
        if (event.type === "transfer") transferNumber = event.number;
      });
      const credit = new CreditWatch({
        callId: call.id,
        reservations: this.services.reservations,
        account: () => this.services.accounts.find(call.account_id),
        onExhausted: (withinMs) => {
          log.info({ withinMs }, "the account's credit does not cover the next minute: ending the call");
          void session.hangUpWith(CREDIT_EXHAUSTED_LINE, "credit_exhausted", withinMs);
        },
        onError: (err) => log.warn({ err }, "balance not read for the call's next minute; trying again"),
      });
      credit.start();
      try {
        await session.start();
      } catch (err) {
        log.error({ err }, "call failed to start");
        void session.stop("error");
      }
      const ended = await session.ended;
      credit.stop();
      log.info({ reason: ended.reason, durationMs: ended.durationMs, turns: ended.turns.length }, "call ended");
      summary = {
        status: ended.reason === "transferred" ? "transferred" : FAILED_END_REASONS.has(ended.reason) ? "failed" : "completed",
        durationMs: ended.durationMs,
        transcript: ended.transcript,
        recordingPath: ended.recording?.path ?? null,
        transferNumber,
        endReason: ended.reason,
        actions: ended.actions,
        latency: callLatency(ended.turns, ended.startedAt),
      };
    } catch (err) {
      log.error({ err }, "call could not run");
      transport.close("error");
      summary = { status: "failed", durationMs: 0, transcript: [], recordingPath: null, endReason: "error" };
    }
    try {
      await this.storeEnd(call.id, summary, log);
    } finally {
      this.live.delete(call.id);
      slot.release();
      stored?.();
      for (const listener of this.endListeners) listener(call.account_id);
    }
  }

  /**
   * Renders the greeting of an outbound call while it rings (see Engine.prepareGreeting): the
   * callee hears it as soon as they answer. Never rejects; a failure only costs that head start.
   */
  async prepareGreeting(call: CallRecord, agentRecord: AgentRecord, signal: AbortSignal): Promise<void> {
    try {
      const { agent, context } = await this.callAgent(call, agentRecord, call.context);
      await this.engine.prepareGreeting(agent, context, signal);
    } catch (err) {
      if (!signal.aborted) this.logger.warn({ err, callId: call.id }, "greeting not rendered ahead");
    }
  }

  /** The agent as this call runs it, and the call's context: a reminder call opens with its reminder. */
  private async callAgent(call: CallRecord, agentRecord: AgentRecord, callContext: Record<string, unknown>) {
    let agent = toAgentSettings(agentRecord);
    let context = callContext;
    // A reminder call's tools act on its appointment (as it is now).
    const appointment = call.appointment_id ? await this.services.appointments.get(call.account_id, call.appointment_id).catch(() => null) : null;
    if (appointment) ({ agent, context } = reminderCall(agent, context, appointment, new Date()));
    return { agent, context, appointment };
  }

  private async createSession(call: CallRecord, setup: CallSetup, transport: MediaTransport, log: Logger): Promise<CallSession> {
    const { agent, context, appointment } = await this.callAgent(call, setup.agent, setup.context);
    if (agent.transferEnabled && agent.transferNumber && !(await this.services.destinations.allowsTransfer(call.account_id, agent.transferNumber))) {
      // Checked on every call: the account's numbers (hence its allowed prefixes) may have changed since the agent was saved.
      log.warn({ agentId: agent.id }, "transfer disabled for this call: the agent's transfer_number is outside the account's allowed prefixes");
      agent.transferEnabled = false;
    }
    const session = this.engine.createCall({
      callId: call.id,
      agent,
      context,
      transport,
      recordingPath: setup.record ? path.join(this.recordingsDir, `${call.id}.wav`) : null,
      maxDurationSec: setup.maxDuration,
      silenceTimeoutMs: this.services.config.engine.silenceTimeoutMs,
      tools: new CallTools(this.services, call, setup.agent, agent, log, transport.sendDtmf ? (digits) => transport.sendDtmf!(digits) : null, appointment),
    });
    session.on("event", (event) => {
      // Provider errors the call survived (recovered) are worth seeing too: a provider degrading.
      if (event.type === "error") log.warn({ error: event.message, recovered: event.recovered }, "call error");
    });
    return session;
  }

  /**
   * Stores the end of a call and bills it, trying again after a database error (a busy
   * database is usually free again within seconds). A call whose end cannot be stored stays
   * `in_progress` and is closed by the start-up recovery of the next process.
   */
  private async storeEnd(callId: string, end: LiveCallEnd, log: Logger): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.services.liveCalls.end(callId, end);
        return;
      } catch (err) {
        const delay = STORE_END_RETRY_MS[attempt];
        if (delay === undefined) {
          log.error({ err }, "call end not stored: the call stays in_progress until the next start-up recovery closes it");
          return;
        }
        log.warn({ err, retryInMs: delay }, "call end not stored; trying again");
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

/** End reasons stored as `failed`: the call broke (an engine error) or the caller's client broke the protocol. */
const FAILED_END_REASONS: ReadonlySet<CallEndReason> = new Set<CallEndReason>(["error", "audio_overrun"]);

function parseMaxDuration(value: string | null): number {
  if (value === null) return MAX_CALL_DURATION_SECONDS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_CALL_DURATION_SECONDS) throw ApiError.field("invalid_request", "max_duration", `must be an integer from 1 to ${MAX_CALL_DURATION_SECONDS}`);
  return n;
}

function parseContext(value: string | null): Record<string, unknown> {
  if (value === null) return {};
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && value.length <= 4096) return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw ApiError.field("invalid_request", "context", "must be a JSON object of at most 4096 characters");
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
