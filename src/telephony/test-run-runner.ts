import type { Logger } from "pino";
import { EmbeddedSpeech, type AnalysisInput, type CallSummary, type Engine } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { knownZone } from "../core/zoned-time.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { Services } from "../services/container.js";
import { checkExpectations } from "../services/test-run-expectations.js";
import { TEST_AUDIO_RATE } from "../services/test-audio.js";
import { pendingResult, type ScenarioResult, type TestScenario } from "../services/test-run-scenario.js";
import type { StartedTestRun, TestRunCarrier } from "../services/test-runs.js";
import { toAgentSettings } from "./agent-settings.js";
import { CallRedaction } from "./call-redaction.js";
import { CallTools } from "./call-tools.js";
import type { EngineSlot } from "./engine-share.js";
import { ScriptedCaller } from "./simulator/scripted-caller.js";
import { waitForSlot } from "./slot-wait.js";

/** Scenarios of one run played at once (each a call in a slot of its own). */
const PARALLEL_SCENARIOS = 2;
/** How long a scenario waits for a call slot while the engine or the account's share is full. */
const SLOT_WAIT_MS = 60_000;
/** A scenario's call ends after this long whatever happens (the caller hangs up too). */
const SCENARIO_MAX_SECONDS = 180;
const PHONE_RATE = TEST_AUDIO_RATE;

/**
 * Carries out agent test runs on this node's engine (see TestRunsService): two scenarios at
 * a time, each a call between the agent (as it is when the scenario starts, with its voice,
 * dialogue, tools and turn-taking) and a ScriptedCaller saying the scenario's lines in an
 * embedded voice over a phone-rate line. A scenario's call takes an engine slot like any call,
 * so test runs cannot crowd out callers past the account's share. Its tools run dry (see
 * CallTools' dryRun): nothing is booked or listed. No call row is written and nothing is billed.
 */
export class TestRunRunner implements TestRunCarrier {
  private readonly speech = new EmbeddedSpeech();
  private readonly runs = new Map<string, { abort: AbortController; done: Promise<void> }>();

  constructor(
    private readonly services: Services,
    private readonly engine: Engine,
    private readonly admit: (accountId: string) => Promise<EngineSlot>,
    private readonly logger: Logger,
  ) {}

  refusal(scenarios: readonly TestScenario[]): ApiError | null {
    const at = scenarios.findIndex((s) => !EmbeddedSpeech.has(s.caller.voice));
    if (at < 0) return null;
    return ApiError.field("invalid_request", `scenarios[${at}].caller.voice`, `must be an embedded voice: ${EmbeddedSpeech.voices.map((v) => v.id).join(", ")}`);
  }

  start(run: StartedTestRun): void {
    const abort = new AbortController();
    const done = this.carryOut(run, abort.signal).finally(() => this.runs.delete(run.id));
    this.runs.set(run.id, { abort, done });
  }

  /** Stops every run under way (their calls end; each run ends `error`) and the callers' voices. */
  async close(): Promise<void> {
    const runs = [...this.runs.values()];
    for (const run of runs) run.abort.abort();
    await Promise.all(runs.map((run) => run.done));
    await this.speech.close();
  }

  private async carryOut(run: StartedTestRun, signal: AbortSignal): Promise<void> {
    const log = this.logger.child({ test_run_id: run.id, account_id: run.accountId, agent_id: run.agentId });
    const results = run.scenarios.map(pendingResult);
    const testRuns = this.services.testRuns;
    // Progress is written in the order it happened, whichever scenario it comes from.
    let written: Promise<void> = Promise.resolve();
    const progress = () => {
      const snapshot = [...results];
      written = written.then(() => testRuns.progress(run.id, snapshot));
      return written;
    };
    let next = 0;
    const worker = async () => {
      for (let index = next++; index < run.scenarios.length && !signal.aborted; index = next++) {
        results[index] = { ...results[index]!, status: "running" };
        await progress();
        results[index] = await this.play(run, index, run.scenarios[index]!, signal, log);
        await progress();
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(PARALLEL_SCENARIOS, run.scenarios.length) }, worker));
      if (!signal.aborted) {
        await testRuns.finish(run, results);
        log.info({ scenarios: results.map((r) => r.status) }, "test run finished");
        return;
      }
      const unfinished = results.map((r) => (r.status === "pending" || r.status === "running" ? { ...r, status: "error" as const, error: "not run: the service stopped" } : r));
      await testRuns.finish(run, unfinished, "the service stopped before the run finished");
    } catch (err) {
      log.error({ err }, "test run failed");
      await testRuns.finish(run, results, "the run failed on our side").catch((finishErr: unknown) => log.error({ err: finishErr }, "test run end not stored"));
    }
  }

  /** One scenario: its call, then its expectations checked against what the call came to. */
  private async play(run: StartedTestRun, index: number, scenario: TestScenario, signal: AbortSignal, log: Logger): Promise<ScenarioResult> {
    const result = pendingResult(scenario);
    let agent: AgentRecord;
    let lines: Int16Array[];
    try {
      agent = await this.services.agents.get(run.accountId, run.agentId);
      lines = [];
      for (const line of scenario.caller.lines) {
        lines.push(typeof line === "string" ? await this.speech.render(line, scenario.caller.voice, PHONE_RATE, signal) : await this.services.testAudio.samples(run.accountId, line.audio_id));
      }
    } catch (err) {
      if (signal.aborted) return { ...result, status: "error", error: "not run: the service stopped" };
      log.warn({ err, scenario: index }, "test scenario not prepared");
      return { ...result, status: "error", error: err instanceof ApiError ? err.message : `the caller's lines could not be said: ${(err as Error).message}` };
    }
    let slot: EngineSlot;
    try {
      slot = await this.slotFor(run.accountId, signal);
    } catch (err) {
      return { ...result, status: "error", error: err instanceof ApiError ? err.message : "no call slot was free" };
    }
    let ended: CallSummary;
    let caller: ScriptedCaller;
    try {
      ({ ended, caller } = await this.call(run, index, agent, scenario, lines, signal, log));
    } finally {
      slot.release();
    }
    // Stored like a call's: what the agent's `redact` hides is hidden here too.
    const redaction = CallRedaction.of(agent);
    if (redaction) ended = await redaction.ended(ended, log);
    const turns = caller.turns().map((t) => ({ line: t.index, voice_to_voice_ms: t.endedAt !== null && t.agentReplyAt !== null ? Math.round(t.agentReplyAt - t.endedAt) : null }));
    if (signal.aborted) return { ...result, status: "error", error: "not run to its end: the service stopped", transcript: ended.transcript, turns };
    const analysis = await this.services.analyzer.analyze(analysisInput(agent, ended), agent.model, { signal });
    const expectations = checkExpectations(scenario.expect, { transcript: ended.transcript, analysis, actions: ended.actions, turns });
    return {
      ...result,
      status: expectations.every((e) => e.passed) ? "passed" : "failed",
      transcript: ended.transcript,
      turns,
      outcome: analysis.outcome,
      expectations,
    };
  }

  /**
   * An engine slot for the scenario's call: while the engine is full or the account holds its
   * share (429/503), the scenario waits for one, a second at a time, up to SLOT_WAIT_MS.
   */
  private slotFor(accountId: string, signal: AbortSignal): Promise<EngineSlot> {
    return waitForSlot(() => this.admit(accountId), { waitMs: SLOT_WAIT_MS, retryMs: 1000, signal });
  }

  private async call(run: StartedTestRun, index: number, agent: AgentRecord, scenario: TestScenario, lines: Int16Array[], signal: AbortSignal, log: Logger) {
    const { caller: script } = scenario;
    const caller = new ScriptedCaller({
      lines,
      pauseMs: script.pause_ms,
      bargeIn: new Set(script.barge_in),
      ...(script.noise_db !== null ? { noiseDb: script.noise_db, noiseSeed: index + 1 } : {}),
      maxCallMs: SCENARIO_MAX_SECONDS * 1000,
    });
    const call = testCall(run, index, agent);
    const callLog = log.child({ call_id: call.id });
    const settings = toAgentSettings(agent);
    const tools = new CallTools(this.services, call, agent, settings, callLog, null, null, async (next) => toAgentSettings(next), true);
    const session = this.engine.createCall({ callId: call.id, agent: settings, context: {}, transport: caller, recordingPath: null, maxDurationSec: SCENARIO_MAX_SECONDS, silenceTimeoutMs: this.services.config.engine.silenceTimeoutMs, tools });
    session.on("event", (event) => {
      if (event.type === "handoff") tools.handedOff(event.toAgentId);
    });
    const stop = () => void session.stop("error");
    signal.addEventListener("abort", stop, { once: true });
    try {
      caller.start();
      await session.start();
      return { ended: await session.ended, caller };
    } catch (err) {
      callLog.warn({ err }, "test scenario's call failed to start");
      void session.stop("error");
      return { ended: await session.ended, caller };
    } finally {
      signal.removeEventListener("abort", stop);
      caller.close();
    }
  }
}

/**
 * The call record a scenario's tools see: never stored. An inbound call from no number to
 * none, so a booking carries no customer phone and a do-not-call request names nobody.
 */
function testCall(run: StartedTestRun, index: number, agent: AgentRecord): CallRecord {
  const at = new Date().toISOString();
  return {
    id: `${run.id}_${index + 1}`,
    account_id: run.accountId,
    agent_id: agent.id,
    direction: "inbound",
    phone_number: null,
    from_number: null,
    status: "in_progress",
    metadata: {},
    context: {},
    record: false,
    appointment_id: null,
    created_at: at,
    updated_at: at,
  } as unknown as CallRecord;
}

function analysisInput(agent: AgentRecord, ended: CallSummary): AnalysisInput {
  return {
    transcript: ended.transcript,
    actions: ended.actions,
    endReason: ended.reason,
    transferred: ended.reason === "transferred",
    durationSeconds: Math.round(ended.durationMs / 1000),
    direction: "inbound",
    farEndNumber: null,
    agentName: agent.name,
    fields: agent.analysis_fields,
    startedAt: new Date(Date.now() - ended.durationMs),
    timeZone: knownZone(agent.metadata.timezone) ?? "UTC",
  };
}
