import type { Logger } from "pino";
import { transferBriefing, type AgentSettings, type CallSummary, type Engine, type LiveCall, type MediaTransport } from "../../engine/index.js";
import type { DialResult } from "./carrier.js";
import { HeldLine } from "./held-line.js";

/** Dials the person a warm transfer goes to (through the SIP trunk); aborting `signal` gives up ringing. */
export type PersonLine = (call: { id: string; accountId: string; to: string; from: string | null }, signal: AbortSignal) => Promise<DialResult>;

/** The person has this long to answer before the caller is transferred cold instead. */
const RING_MS = 30_000;
/** The briefing is cut off after this long (a person talking over it keeps it from ending). */
const BRIEFING_MAX_MS = 30_000;

/** One warm transfer to carry out: a call that ended `transferred`, its caller's line held. */
export interface WarmTransferRequest {
  callId: string;
  accountId: string;
  caller: HeldLine;
  /** The number the caller is transferred to (the agent's `transfer_number`). */
  to: string;
  /** The number the person sees calling (the call's own number). */
  from: string | null;
  agent: AgentSettings;
  /** What the call produced, for the briefing. */
  summary: Pick<CallSummary, "transcript" | "actions">;
  /** The bridge is ended after this long: a bridged call never outlives the call's own limit. */
  maxBridgeMs: number;
}

/** How a warm transfer went: `bridged` once both sides talk, else `cold` (the caller was handed over as a cold transfer) or `abandoned` (the caller hung up first). */
export type WarmTransferOutcome = { outcome: "bridged" | "cold" | "abandoned"; reason: string };

/**
 * Warm transfers (an agent's `transfer_mode` `warm`): while the caller holds, Parley calls the
 * person at `transfer_number` itself, tells them what the call was about (the agent's voice
 * saying `transferBriefing`), then connects the two lines, relaying their audio until either
 * hangs up. Anything short of that (no answer, busy, the person hanging up during the
 * briefing, a line that cannot be relayed) falls back to the cold transfer the call would have
 * had. The caller hanging up meanwhile ends it all.
 */
export class WarmTransfers {
  private readonly live = new Set<() => void>();

  constructor(
    private readonly engine: Pick<Engine, "createCall">,
    private readonly dialPerson: PersonLine,
    private readonly logger: Logger,
  ) {}

  /** Bridges in progress. */
  get bridged(): number {
    return this.live.size;
  }

  /**
   * Carries out `request`; `briefed` resolves once the person has been briefed or it came to
   * nothing (the engine is then no longer used), `done` once the lines are closed or handed on
   * cold, with how long the two were bridged (0: never). `end` ends the bridge (the call ended
   * through the API, its credit ran out).
   */
  start(request: WarmTransferRequest): { briefed: Promise<WarmTransferOutcome>; done: Promise<number>; end(): void } {
    const log = this.logger.child({ call_id: request.callId, account_id: request.accountId });
    let settle!: (bridgedMs: number) => void;
    const done = new Promise<number>((resolve) => (settle = resolve));
    const control = { end: () => {}, ended: false };
    const briefed = this.connect(request, log, settle, control).catch((err: unknown) => {
      log.error({ err }, "warm transfer failed: transferring cold");
      request.caller.release();
      settle(0);
      return { outcome: "cold" as const, reason: "error" };
    });
    void briefed.then(({ outcome, reason }) => log.info({ event: "call.warm_transfer", outcome, reason }, "warm transfer"));
    return {
      briefed,
      done,
      end: () => {
        control.ended = true;
        control.end();
      },
    };
  }

  /** Ends every bridge (shutting down). */
  closeAll(): void {
    for (const end of [...this.live]) end();
  }

  private async connect(request: WarmTransferRequest, log: Logger, settle: (bridgedMs: number) => void, control: { end: () => void; ended: boolean }): Promise<WarmTransferOutcome> {
    const { caller } = request;
    const callerGone = new AbortController();
    const onCallerHangup = () => callerGone.abort();
    caller.line.once("hangup", onCallerHangup);
    // Ended from outside before the bridge: as if the caller had hung up (their line is closed at the end).
    control.end = () => {
      callerGone.abort();
      caller.line.close("ended");
    };
    const finish = (outcome: WarmTransferOutcome): WarmTransferOutcome => {
      caller.line.off("hangup", onCallerHangup);
      settle(0);
      return outcome;
    };
    if (caller.line.closed || control.ended) return finish({ outcome: "abandoned", reason: "the caller hung up before the transfer" });

    const ringing = AbortSignal.any([callerGone.signal, AbortSignal.timeout(RING_MS)]);
    const dialled = await this.dialPerson({ id: `${request.callId}-transfer`, accountId: request.accountId, to: request.to, from: request.from }, ringing);
    if (dialled.outcome !== "answered") {
      if (callerGone.signal.aborted) return finish({ outcome: "abandoned", reason: "the caller hung up while the person was called" });
      caller.release();
      return finish({ outcome: "cold", reason: `the person did not take the call (${dialled.outcome}: ${dialled.reason})` });
    }
    const person = new HeldLine(dialled.transport, { deaf: true });
    person.keep();
    await this.brief(request, person, log);
    if (caller.line.closed) {
      person.line.close("caller hung up");
      return finish({ outcome: "abandoned", reason: "the caller hung up during the briefing" });
    }
    if (person.line.closed) {
      caller.release();
      return finish({ outcome: "cold", reason: "the person hung up during the briefing" });
    }
    if (!canRelay(caller.line, person.line)) {
      person.line.close("transferred cold");
      caller.release();
      return finish({ outcome: "cold", reason: `the lines' audio cannot be relayed (${caller.line.protocol} ${caller.line.inputSampleRate} Hz, ${person.line.protocol} ${person.line.inputSampleRate} Hz)` });
    }
    caller.line.off("hangup", onCallerHangup);
    control.end = this.bridge(caller.line, person.line, request.maxBridgeMs, settle);
    return { outcome: "bridged", reason: "both sides connected" };
  }

  /** The agent's voice tells the person what the call was about; resolves once it is said (or cut off, or either side hung up). */
  private async brief(request: WarmTransferRequest, person: HeldLine, log: Logger): Promise<void> {
    const { agent, summary, caller } = request;
    const businessName = typeof agent.metadata.business_name === "string" ? agent.metadata.business_name : null;
    // Said as it is: the caller's words must not reach the greeting's {{placeholders}}.
    const text = transferBriefing({ agentName: agent.name, businessName, transcript: summary.transcript, actions: summary.actions }).replace(/[{}]/g, "");
    const session: LiveCall = this.engine.createCall({
      callId: `${request.callId}-briefing`,
      agent: { ...agent, firstMessage: text, endCallPhrases: [], transferEnabled: false, intents: [] },
      context: {},
      transport: person,
      recordingPath: null,
      maxDurationSec: BRIEFING_MAX_MS / 1000,
    });
    let spoke = false;
    const said = new Promise<void>((resolve) => {
      session.on("event", (event) => {
        if (event.type === "state" && event.state === "speaking") spoke = true;
        // Listening after having spoken: the briefing was said (the session does not hear the person: see HeldLine's `deaf`).
        if (event.type === "state" && event.state === "listening" && spoke) resolve();
      });
      void session.ended.then(() => resolve());
      caller.line.once("hangup", () => resolve());
    });
    const started = await session.start().then(
      () => true,
      (err: unknown) => (log.warn({ err }, "warm transfer: the briefing did not start; connecting without it"), false),
    );
    if (started) await said;
    await session.stop("transferred");
  }

  /** Relays each side's audio to the other until either hangs up, `maxMs` has passed or the returned function is called. */
  private bridge(caller: MediaTransport, person: MediaTransport, maxMs: number, settle: (bridgedMs: number) => void): () => void {
    const startedAt = Date.now();
    const toPerson = (frame: Parameters<MediaTransport["sendAudio"]>[0]) => person.sendAudio(frame);
    const toCaller = (frame: Parameters<MediaTransport["sendAudio"]>[0]) => caller.sendAudio(frame);
    const end = () => {
      if (!this.live.delete(end)) return;
      clearTimeout(limit);
      caller.off("audio", toPerson);
      person.off("audio", toCaller);
      caller.close("transfer ended");
      person.close("transfer ended");
      settle(Date.now() - startedAt);
    };
    const limit = setTimeout(end, maxMs);
    this.live.add(end);
    caller.on("audio", toPerson);
    person.on("audio", toCaller);
    caller.once("hangup", end);
    person.once("hangup", end);
    return end;
  }
}

/** Audio goes from one line to the other as it comes: the same rate both ways (two SIP lines at 8 kHz). */
function canRelay(a: MediaTransport, b: MediaTransport): boolean {
  return a.inputSampleRate === b.outputSampleRate && b.inputSampleRate === a.outputSampleRate;
}
