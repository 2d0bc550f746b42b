import type { IncomingMessage, Server } from "node:http";
import path from "node:path";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { WebSocketServer, type WebSocket } from "ws";
import {
  NATIVE_FORMATS,
  NATIVE_OPUS_RATES,
  NATIVE_PCM_RATES,
  NativeTransport,
  TwilioTransport,
  type CallEvent,
  type CallSession,
  type Engine,
  type MediaTransport,
  type NativeFormat,
} from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { MAX_CALL_DURATION_SECONDS } from "../http/schemas/calls.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { Services } from "../services/container.js";
import type { LiveCallEnd, LiveCallStart } from "../services/live-calls.js";
import type { LiveCallControl } from "../services/calls.js";
import { grants } from "../services/permissions.js";
import { toAgentSettings } from "./agent-settings.js";
import { CREDIT_EXHAUSTED_LINE, CreditWatch } from "./credit-watch.js";
import { EngineShare, type EngineSlot } from "./engine-share.js";
import { refuseUpgrade } from "./upgrade-response.js";

/** Waits before storing a call's end again after a database error. */
const STORE_END_RETRY_MS = [500, 2_000, 10_000];
/** How often live calls are marked alive: a crashed call's duration is known to within this. */
const HEARTBEAT_MS = 15_000;
/** How long a Twilio stream may take to send its `start` message. */
const TWILIO_START_TIMEOUT_MS = 10_000;
/** WebSocket close code for a policy violation (bad or missing credentials). */
const POLICY_VIOLATION = 1008;
/** WebSocket close code "try again later": no engine slot for the account now. */
const TRY_AGAIN_LATER = 1013;

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
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
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
    this.heartbeat = setInterval(() => {
      if (this.live.size > 0) void services.liveCalls.heartbeat([...this.live.keys()]).catch((err: unknown) => logger.error({ err }, "call heartbeat failed"));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  attach(server: Server): void {
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (!this.accepting) return refuseUpgrade(socket, new ApiError(503, "shutting_down", "The service is shutting down: no new calls; try again shortly"));
      if (url.pathname === "/media/ws") void this.acceptNative(req, socket, head, url);
      else if (url.pathname === "/media/twilio") this.wss.handleUpgrade(req, socket, head, (ws) => void this.acceptTwilio(ws));
      else refuseUpgrade(socket, new ApiError(404, "not_found", `No WebSocket endpoint ${url.pathname}`));
    });
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
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
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
      slot = await this.admit(account.id);
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
    } catch (err) {
      slot?.release();
      refuseUpgrade(socket, err);
      return;
    }
    let call: CallRecord;
    try {
      call = await this.services.liveCalls.begin(setup);
    } catch (err) {
      slot.release();
      refuseUpgrade(socket, err);
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const transport = new NativeTransport(ws, { format, sampleRate });
      transport.sendConnected(call.id);
      void this.runCall(call, setup, transport, slot);
    });
  }

  private async acceptTwilio(ws: WebSocket): Promise<void> {
    const transport = new TwilioTransport(ws);
    try {
      const start = await withTimeout(transport.waitForStart(), TWILIO_START_TIMEOUT_MS, "no start message");
      const params = start.customParameters ?? {};
      const account = await this.services.accounts.findByMediaToken(params.token ?? "");
      if (!account) {
        ws.close(POLICY_VIOLATION, "missing or invalid media token");
        return;
      }
      const to = params.To ?? params.to ?? null;
      const agent = await this.routeTwilioCall(account, params.agent_id ?? null, to);
      if (!agent) {
        ws.close(POLICY_VIOLATION, to ? `no agent answers ${to}` : "agent_id or To is required");
        return;
      }
      const slot = await this.admit(account.id).catch((err: unknown) => {
        ws.close(TRY_AGAIN_LATER, (err as Error).message.slice(0, 100));
      });
      if (!slot) return;
      const setup: CallSetup = {
        account,
        agent,
        direction: to ? "inbound" : "web",
        phoneNumber: to,
        fromNumber: params.From ?? params.from ?? null,
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
      ws.close(POLICY_VIOLATION, (err as Error).message.slice(0, 100));
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
    let summary: { status: LiveCallEnd["status"]; durationMs: number; transcript: LiveCallEnd["transcript"]; recordingPath: string | null; transferNumber: string | null };
    try {
      const session = await this.createSession(call, setup, transport, log);
      this.live.set(call.id, { session, stored: new Promise<void>((resolve) => (stored = resolve)) });
      let transferNumber: string | null = null;
      session.on("event", (event) => {
        if (event.type === "transfer") transferNumber = event.number;
      });
      const credit = new CreditWatch({
        callId: call.id,
        accountId: call.account_id,
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
        status: ended.reason === "transferred" ? "transferred" : ended.reason === "error" ? "failed" : "completed",
        durationMs: ended.durationMs,
        transcript: ended.transcript,
        recordingPath: ended.recording?.path ?? null,
        transferNumber,
      };
    } catch (err) {
      log.error({ err }, "call could not run");
      transport.close("error");
      summary = { status: "failed", durationMs: 0, transcript: [], recordingPath: null, transferNumber: null };
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

  private async createSession(call: CallRecord, setup: CallSetup, transport: MediaTransport, log: Logger): Promise<CallSession> {
    const agent = toAgentSettings(setup.agent);
    if (agent.transferEnabled && agent.transferNumber && !(await this.services.destinations.allowsTransfer(call.account_id, agent.transferNumber))) {
      // Checked on every call: the account's numbers (hence its allowed prefixes) may have changed since the agent was saved.
      log.warn({ agentId: agent.id }, "transfer disabled for this call: the agent's transfer_number is outside the account's allowed prefixes");
      agent.transferEnabled = false;
    }
    const session = this.engine.createCall({
      callId: call.id,
      agent,
      context: setup.context,
      transport,
      recordingPath: setup.record ? path.join(this.recordingsDir, `${call.id}.wav`) : null,
      maxDurationSec: setup.maxDuration,
      silenceTimeoutMs: this.services.config.engine.silenceTimeoutMs,
    });
    session.on("event", (event) => {
      // Provider errors the call survived (recovered) are worth seeing too: a provider degrading.
      if (event.type === "error") log.warn({ error: event.message, recovered: event.recovered }, "call error");
      void this.onEvent(call, setup, event).catch((err: unknown) => log.error({ err }, "call event not stored"));
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

  private async onEvent(call: CallRecord, setup: CallSetup, event: CallEvent): Promise<void> {
    if (event.type !== "tool_call" || event.name !== "book_appointment") return;
    const a = event.arguments;
    await this.services.appointments.create({
      account_id: call.account_id,
      call_id: call.id,
      agent_id: call.agent_id,
      customer_name: typeof a.customer_name === "string" ? a.customer_name : null,
      customer_phone: setup.fromNumber,
      date: String(a.date),
      time: String(a.time),
      service: typeof a.service === "string" ? a.service : null,
      ...(typeof a.duration_minutes === "number" ? { duration_minutes: a.duration_minutes } : {}),
    });
  }
}

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
