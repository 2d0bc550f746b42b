import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { callLatency, type AgentSettings, type CallEndReason, type CallSummary, type Engine, type LiveCall, type MediaTransport } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { clientAddressKey } from "../core/client-address-key.js";
import { FixedWindowRateLimiter, rateLimitExceeded } from "../core/fixed-window-rate-limiter.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { Services } from "../services/container.js";
import type { LiveCallEnd, LiveCallStart } from "../services/live-calls.js";
import { recordingFile } from "../services/recording-files.js";
import type { LiveCallControl } from "../services/calls.js";
import { toAgentSettings } from "./agent-settings.js";
import { logCallEvent } from "./call-event-log.js";
import { CallTools } from "./call-tools.js";
import { CallRedaction } from "./call-redaction.js";
import { ListenEndpoint } from "./listen-endpoint.js";
import { SupervisedLine, type TakeOver } from "./supervised-line.js";
import type { SupervisorAction } from "../services/call-supervision.js";
import { HeldLine } from "./held-line.js";
import { WarmTransfers, type PersonLine } from "./warm-transfer.js";
import { reminderCall } from "./reminder-opening.js";
import { CREDIT_EXHAUSTED_LINE, CreditWatch } from "./credit-watch.js";
import { EngineShare, type EngineSlot } from "./engine-share.js";
import type { LiveCallRunner, MediaEndpoint } from "./media-endpoint.js";
import { NativeMediaEndpoint } from "./native-media-endpoint.js";
import { TwilioMediaEndpoint } from "./twilio-media-endpoint.js";
import { TelnyxMediaEndpoint } from "./telnyx-media-endpoint.js";
import { VonageMediaEndpoint } from "./vonage-media-endpoint.js";
import { PendingDials } from "./pending-dials.js";
import { KeyedSlots } from "../core/keyed-slots.js";
import type { CarrierStreams } from "./carrier-media-endpoint.js";
import { refuseUpgrade } from "./upgrade-response.js";

/** Waits before storing a call's end again after a database error. */
const STORE_END_RETRY_MS = [500, 2_000, 10_000];

/**
 * Where live calls run, whatever brought them: the media WebSocket endpoints (`/media/ws`,
 * `/media/twilio`, each in its own file: they authenticate and hand calls over), SIP and the
 * carriers. Each call becomes an engine call session; at its end the call is stored and billed.
 * It also routes WebSocket upgrades to the endpoints, after the checks they all share (the
 * service accepting calls, the client's upgrade rate).
 */
export class MediaGateway implements LiveCallControl, LiveCallRunner {
  /** Upgrades per client address, counted before any authentication. */
  private readonly upgrades = new FixedWindowRateLimiter();
  private readonly endpoints: ReadonlyMap<string, MediaEndpoint>;
  /** Live calls: the session, the promise that settles once its end is stored, and how to end a warm transfer under way. */
  private readonly live = new Map<string, LiveEntry>();
  /** Marks live calls alive in the database, with their transcript so far, so a crash leaves their last moment and words known (see LiveCallsService.recoverInterrupted). */
  private readonly heartbeat: NodeJS.Timeout;
  private accepting = true;
  private readonly endListeners: Array<(accountId: string) => void> = [];
  /** The engine's call slots, shared fairly between accounts. */
  private readonly share: EngineShare;
  /** Warm transfers, once a line to call the person through is known (see `warmTransfersThrough`). */
  private warm: WarmTransfers | undefined;

  constructor(
    private readonly services: Services,
    private readonly engine: Engine,
    private readonly logger: Logger,
    carriers: CarrierStreams = { dials: new PendingDials(), control: () => undefined },
  ) {
    this.share = new EngineShare({ capacity: engine.capacity, sharePercent: services.config.engine.accountSharePercent, countAccounts: () => services.accounts.count() });
    // Streams waiting for their first message are counted over all the carrier endpoints together.
    const carrierDeps = { ...carriers, pending: new KeyedSlots(services.config.media.pendingStreams) };
    this.endpoints = new Map(
      [new NativeMediaEndpoint(services, this, logger), new ListenEndpoint(services, this, logger), new TwilioMediaEndpoint(services, this, logger, carrierDeps), new TelnyxMediaEndpoint(services, this, logger, carrierDeps), new VonageMediaEndpoint(services, this, logger, carrierDeps)].map((e) => [e.path, e]),
    );
    // A crashed call's duration and transcript are known to within this (PARLEY_CALL_HEARTBEAT_MS).
    this.heartbeat = setInterval(() => {
      if (this.live.size === 0) return;
      const calls = [...this.live].map(([id, { session, redaction }]) => ({ id, transcript: redaction ? redaction.transcript(session.transcriptSoFar()) : session.transcriptSoFar() }));
      void services.liveCalls.heartbeat(calls).catch((err: unknown) => logger.error({ err }, "call heartbeat failed"));
    }, services.config.engine.heartbeatMs);
    this.heartbeat.unref();
    services.metrics.watchEngine(() => engine.usage());
    services.metrics.watchCallSlots(() => this.share.held(), engine.capacity);
  }

  attach(server: Server): void {
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (!this.accepting) return refuseUpgrade(socket, new ApiError(503, "shutting_down", "The service is shutting down: no new calls; try again shortly"));
      const address = clientAddressKey(req.socket.remoteAddress);
      const decision = this.upgrades.hit(address, this.services.config.media.upgradesPerMinute);
      if (!decision.allowed) return refuseUpgrade(socket, rateLimitExceeded(decision, "WebSocket upgrades"));
      const endpoint = this.endpoints.get(url.pathname);
      if (!endpoint) return refuseUpgrade(socket, new ApiError(404, "not_found", `No WebSocket endpoint ${url.pathname}`));
      endpoint.upgrade(req, socket, head, url, address);
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

  /**
   * Agents with `transfer_mode` `warm` transfer their SIP calls warm from now on, calling the
   * person through `dialPerson` (the SIP trunk). Without it, every transfer is cold.
   */
  warmTransfersThrough(dialPerson: PersonLine): void {
    this.warm = new WarmTransfers(this.engine, dialPerson, this.logger);
  }

  /** Called with the account of every call once its end is stored (a concurrent-call slot is free). */
  onCallEnded(listener: (accountId: string) => void): void {
    this.endListeners.push(listener);
  }

  /** Hangs up one live call; resolves once its end is stored (false: not live in this process). */
  async hangUp(callId: string): Promise<boolean> {
    const call = this.live.get(callId);
    if (!call) return false;
    call.endTransfer?.();
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
    this.warm?.closeAll();
    for (const endpoint of this.endpoints.values()) endpoint.close();
  }

  /**
   * Runs a started call (its row `in_progress`) on `transport` until it ends, then stores and
   * bills it. Never rejects: whatever goes wrong in one call (a database error storing its
   * end, an agent that cannot be loaded) ends that call and is logged; the other live calls
   * and the process go on.
   */
  async runCall(call: CallRecord, setup: LiveCallStart, transport: MediaTransport, slot: EngineSlot): Promise<void> {
    const log = this.logger.child({ call_id: call.id, account_id: call.account_id });
    const metrics = this.services.metrics;
    metrics.callStarted(transport.protocol);
    let stored!: () => void;
    let summary: LiveCallEnd;
    // A warm transfer keeps the caller's line when the session ends, to brief the person and bridge
    // (whether it is warm is asked at the transfer: the agent on the line then decides).
    let tools: CallTools | undefined;
    const held = this.warm && transport.protocol === "sip" ? new HeldLine(transport, { holdsTransfer: () => tools?.agentOnLine.transfer_mode === "warm" }) : null;
    // Supervisors listen to the call and may take it over through this line (see ListenEndpoint).
    const line = new SupervisedLine(held ?? transport);
    try {
      // What the call may keep of what was said: compiled before it starts (the agent's `redact`).
      const redaction = CallRedaction.of(setup.agent);
      const created = await this.createSession(call, setup, line, log);
      const { session } = created;
      tools = created.tools;
      const live: LiveEntry = { session, stored: new Promise<void>((resolve) => (stored = resolve)), redaction, line, accountId: call.account_id };
      this.live.set(call.id, live);
      let transferNumber: string | null = null;
      session.on("event", (event) => {
        if (event.type === "transfer") transferNumber = event.number;
      });
      const credit = new CreditWatch({
        callId: call.id,
        accountId: call.account_id,
        reservations: this.services.reservations,
        onExhausted: (withinMs) => {
          log.info({ within_ms: withinMs }, "the account's credit does not cover the next minute: ending the call");
          // During a warm transfer the session is over: the transfer (the bridge) is ended instead.
          if (live.endTransfer) setTimeout(() => live.endTransfer?.(), withinMs);
          else void session.hangUpWith(CREDIT_EXHAUSTED_LINE, "credit_exhausted", withinMs);
        },
        onError: (err) => log.warn({ err }, "balance not read for the call's next minute; trying again"),
      });
      credit.start();
      try {
        await session.start();
      } catch (err) {
        // An abort is the call ending while it started (the caller hung up during the greeting): not a failure.
        if ((err as Error).name === "AbortError") log.debug("call ended while it started");
        else log.error({ err }, "call failed to start");
        void session.stop("error");
      }
      const ended = redaction ? await redaction.ended(await session.ended, log) : await session.ended;
      // A warm transfer: the call goes on (held, then bridged), counted and charged as before, until it is over.
      const transferredMs = held?.held && transferNumber ? await this.transferWarm(call, setup, held, transferNumber, ended, tools!, live) : 0;
      credit.stop();
      summary = {
        status: ended.reason === "transferred" ? "transferred" : FAILED_END_REASONS.has(ended.reason) ? "failed" : "completed",
        durationMs: ended.durationMs + transferredMs,
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
      metrics.callEnded(transport.protocol, summary.status);
      this.live.delete(call.id);
      slot.release();
      stored?.();
      for (const listener of this.endListeners) listener(call.account_id);
    }
  }

  /** Carries out a supervisor's action on a call live here (see CallSupervision); false when it is not. */
  supervise(callId: string, action: SupervisorAction): boolean {
    const entry = this.live.get(callId);
    if (!entry) return false;
    if (action.action === "say") entry.session.say(action.text);
    else if (action.action === "whisper") entry.session.whisper(action.text);
    else this.handBack(entry);
    return true;
  }

  /** The live call `callId` of `accountId` for a listener, or undefined when it does not run here (or is another account's). */
  monitored(accountId: string, callId: string): MonitoredCall | undefined {
    const entry = this.live.get(callId);
    if (!entry || entry.accountId !== accountId || entry.endTransfer) return undefined;
    return {
      session: entry.session,
      line: entry.line,
      takeOver: () => {
        if (entry.takeOver) throw new Error("the call is already taken over");
        const voice = entry.line.takeOver();
        entry.session.takeOver();
        entry.takeOver = voice;
        return {
          send: (pcm16k) => voice.send(pcm16k),
          end: () => {
            if (entry.takeOver === voice) this.handBack(entry);
          },
        };
      },
    };
  }

  /** The supervisor's take-over of the call ends: the agent has the line again. */
  private handBack(entry: LiveEntry): void {
    entry.takeOver?.end();
    entry.takeOver = undefined;
    entry.session.handBack();
  }

  /**
   * Carries out the warm transfer of a call whose session ended `transferred` on a held line
   * (see WarmTransfers), with the agent on the line at the transfer briefing the person; resolves
   * once it is over with how long it took (the hold, the briefing and the bridge: the call's
   * own time, billed with it). The call's engine slot stays taken meanwhile.
   */
  private async transferWarm(call: CallRecord, setup: LiveCallStart, held: HeldLine, to: string, ended: CallSummary, tools: CallTools, live: LiveEntry): Promise<number> {
    const startedAt = Date.now();
    const onLine = tools.agentOnLine;
    const agent = onLine.id === setup.agent.id ? (await this.callAgent(call, setup.agent, setup.context)).agent : toAgentSettings(onLine);
    const transfer = this.warm!.start({
      callId: call.id,
      accountId: call.account_id,
      caller: held,
      to,
      from: call.direction === "inbound" ? call.phone_number : call.from_number,
      agent,
      summary: ended,
      maxBridgeMs: Math.max(0, setup.maxDuration * 1000 - ended.durationMs),
    });
    live.endTransfer = transfer.end;
    await transfer.done;
    return Date.now() - startedAt;
  }

  /**
   * Renders the greeting of an outbound call while it rings (see Engine.prepareGreeting): the
   * callee hears it as soon as they answer. Never rejects; a failure only costs that head start.
   */
  async prepareGreeting(call: CallRecord, agentRecord: AgentRecord, signal: AbortSignal): Promise<void> {
    try {
      const { agent, context } = await this.callAgent(call, agentRecord, call.context);
      await this.engine.prepareGreeting(agent, context, signal, call.id);
    } catch (err) {
      if (!signal.aborted) this.logger.warn({ err, call_id: call.id, account_id: call.account_id }, "greeting not rendered ahead");
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

  private async createSession(call: CallRecord, setup: LiveCallStart, transport: MediaTransport, log: Logger): Promise<{ session: LiveCall; tools: CallTools }> {
    const { agent, context, appointment } = await this.callAgent(call, setup.agent, setup.context);
    await this.checkTransfer(call, agent, log);
    // An agent the call is handed off to runs as the first one does, its transfer checked the same way.
    const settingsOf = async (next: AgentRecord) => {
      const settings = toAgentSettings(next);
      await this.checkTransfer(call, settings, log);
      return settings;
    };
    const tools = new CallTools(this.services, call, setup.agent, agent, log, transport.sendDtmf ? (digits) => transport.sendDtmf!(digits) : null, appointment, settingsOf);
    const session = this.engine.createCall({
      callId: call.id,
      agent,
      context,
      transport,
      recordingPath: setup.record ? recordingFile(this.services.config.dataDir, call.id) : null,
      maxDurationSec: setup.maxDuration,
      silenceTimeoutMs: this.services.config.engine.silenceTimeoutMs,
      tools,
    });
    session.on("event", (event) => {
      logCallEvent(log, event);
      if (event.type === "handoff") tools.handedOff(event.toAgentId);
      this.services.metrics.callEvent(transport.protocol, event);
      // The call goes on unrecorded (the engine deleted the half file): counted, and /readyz says so.
      if (event.type === "recording_failed") this.services.storageHealth.failed("recording", event, { call_id: call.id, account_id: call.account_id });
      else if (event.type === "recording") this.services.storageHealth.succeeded("recording");
    });
    return { session, tools };
  }

  /**
   * Turns off transfer for this call when the agent's transfer_number is outside the account's
   * allowed prefixes. Checked on every call: the account's numbers (hence its allowed prefixes)
   * may have changed since the agent was saved.
   */
  private async checkTransfer(call: CallRecord, agent: AgentSettings, log: Logger): Promise<void> {
    if (!agent.transferEnabled || !agent.transferNumber || (await this.services.destinations.allowsTransfer(call.account_id, agent.transferNumber))) return;
    log.warn({ agent_id: agent.id }, "transfer disabled for this call: the agent's transfer_number is outside the account's allowed prefixes");
    agent.transferEnabled = false;
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
        log.warn({ err, retry_in_ms: delay }, "call end not stored; trying again");
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}

/** A call this node runs: its session, when its end is stored, its warm transfer's end, what it may keep of what was said. */
interface LiveEntry {
  session: LiveCall;
  stored: Promise<void>;
  endTransfer?: () => void;
  redaction: CallRedaction | null;
  accountId: string;
  /** The call's line, as supervisors hear and take it. */
  line: SupervisedLine;
  /** A supervisor speaking in the agent's place. */
  takeOver?: TakeOver;
}

/** A live call as a supervisor's listener sees it (see ListenEndpoint). */
export interface MonitoredCall {
  session: LiveCall;
  line: SupervisedLine;
  /** The supervisor takes the call over until `end()` (or a hand-back through the API). Throws when it is taken over already. */
  takeOver(): TakeOver;
}

/** End reasons stored as `failed`: the call broke (an engine error) or the caller's client broke the protocol. */
const FAILED_END_REASONS: ReadonlySet<CallEndReason> = new Set<CallEndReason>(["error", "audio_overrun"]);
