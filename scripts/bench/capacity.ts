import { integer, UsageError } from "../../src/cli/args.js";
import { DEFAULT_STANDIN_REPLY } from "../standins/openai-chat-standin.js";
import type { StandinDelays } from "../standins/standin-server.js";
import type { LevelResult } from "./bench-result.js";
import type { Conversation, EndpointingMode } from "./conversation.js";
import { round, summarize } from "./percentiles.js";
import type { Protocol } from "./play-conversation.js";
import { samplesOf, timedSteps } from "./summarize-calls.js";

/**
 * The capacity search (`--find-capacity`): which levels it tries, the bounds a level must keep,
 * and how a level is judged. Pure: run-bench.ts runs the levels, this decides.
 */

export type Providers = "embedded" | "standin";

/** Why the search stopped: a bound crossed at the last level tried, or every level up to --max held. */
export type CapacityStop = "v2v_p95" | "jitter_p95" | "failed_calls" | "max_level";
/** A bound a level can cross, in the order `stopped_by` names them when several are crossed. */
export type CapacityBound = Exclude<CapacityStop, "max_level">;

export interface CapacityBounds {
  /** Voice-to-voice p95 (the caller's clock) a holding level keeps to, ms. */
  v2v_p95_ms: number;
  /** Outgoing frame jitter p95 a holding level keeps to, ms. */
  jitter_p95_ms: number;
}

/** The levels tried: from, from + step, ... up to max. */
export interface CapacitySearch {
  from: number;
  step: number;
  max: number;
}

/** One level tried, judged against the bounds. */
export interface CapacityLevel {
  concurrency: number;
  holds: boolean;
  /** The bounds this level crossed (empty when it holds). */
  crossed: CapacityBound[];
  v2v_p95_ms: number | null;
  jitter_p95_ms: number | null;
  /** Calls refused or errored (not connected, or broken off). */
  failed_calls: number;
  /** Calls whose conversation's required outcome was not met: reported, not judged. */
  outcomes_not_met: number;
  server_cpu_percent_per_call: number | null;
  /**
   * The level's peak resident memory above the idle server (measured before the search's first
   * level), per call: unlike the levels table's figure (above the level's own start), memory the
   * server kept from earlier levels counts, since these calls need it too.
   */
  server_rss_mb_per_call: number | null;
}

/** bench.json `capacity[]`: the search of one protocol in one endpointing mode. */
export interface CapacityResult {
  protocol: Protocol;
  providers: Providers;
  endpointing_mode: EndpointingMode;
  bounds: CapacityBounds;
  search: CapacitySearch;
  /** The last level that held; 0 when none did. */
  largest_holding_level: number;
  stopped_by: CapacityStop;
  /** In the order tried; the search stops at the first that does not hold. */
  levels: CapacityLevel[];
}

/** The highest level the search may be asked to reach (the fixed levels' cap of 200 does not apply). */
export const CAPACITY_MAX_LEVEL = 1000;
export const CAPACITY_SEARCH_DEFAULTS: Readonly<Record<Providers, { full: CapacitySearch; quick: CapacitySearch }>> = Object.freeze({
  embedded: { full: { from: 2, step: 2, max: 24 }, quick: { from: 1, step: 1, max: 2 } },
  standin: { full: { from: 50, step: 50, max: 400 }, quick: { from: 10, step: 10, max: 20 } },
});
export const DEFAULT_JITTER_P95_MS = 20;
export const DEFAULT_EMBEDDED_V2V_P95_MS = 1000;
/** What the engine may add, at p95, to the stand-ins' and the endpointing's own time before a level fails. */
export const STANDIN_V2V_HEADROOM_MS = 100;

/** `--from`, `--step`, `--max`: the given values over the providers' defaults (the quick ones with --quick). */
export function parseCapacitySearch(o: { from?: string; step?: string; max?: string }, providers: Providers, quick: boolean): CapacitySearch {
  const d = CAPACITY_SEARCH_DEFAULTS[providers][quick ? "quick" : "full"];
  const search = { from: integer(o.from, "from", 1) ?? d.from, step: integer(o.step, "step", 1) ?? d.step, max: integer(o.max, "max", 1) ?? d.max };
  if (search.max > CAPACITY_MAX_LEVEL) throw new UsageError(`--max must be at most ${CAPACITY_MAX_LEVEL}`);
  if (search.from > search.max) throw new UsageError(`--from (${search.from}) must not be above --max (${search.max})`);
  return search;
}

export function capacityLevels(s: CapacitySearch): number[] {
  const levels: number[] = [];
  for (let n = s.from; n <= s.max; n += s.step) levels.push(n);
  return levels;
}

/**
 * The conversations a search plays: those with a caller turn to time. It judges voice-to-voice,
 * and a small level plays only a few conversations (one per lane): each must give a sample.
 */
export function searchConversations(conversations: readonly Conversation[]): Conversation[] {
  const timed = conversations.filter((c) => timedSteps(c) > 0);
  if (timed.length === 0) {
    const names = conversations.map((c) => c.name);
    throw new UsageError(`--find-capacity judges voice-to-voice, and ${names.join(", ")} ${names.length > 1 ? "have" : "has"} no caller turn to time (a say step while the agent is quiet)`);
  }
  return timed;
}

/** Tokens the chat stand-in streams before its canned reply's first sentence is complete (TTS starts on it). */
export function firstSentenceTokens(reply = DEFAULT_STANDIN_REPLY): number {
  const tokens = reply.match(/\s*\S+/g) ?? [];
  const end = tokens.findIndex((t) => /[.!?]$/.test(t));
  return end === -1 ? tokens.length : end + 1;
}

/**
 * The voice-to-voice a stand-in call cannot beat: the endpointing wait (the mode's
 * `endpointing_ms`: fixed waits it out; for adaptive it is the longest wait), the ASR final,
 * the first token, the first sentence's tokens and the first speech byte.
 */
export function standinV2vFloorMs(delays: StandinDelays, endpointingMs: number): number {
  return endpointingMs + delays.asrFinalMs + delays.llmFirstTokenMs + firstSentenceTokens() * delays.llmTokenMs + delays.ttsFirstByteMs;
}

/** The bounds: given ones, else 1000 ms (embedded) or the stand-in floor + 100 ms, and 20 ms of jitter. */
export function capacityBounds(
  given: { v2vP95Ms?: number; jitterP95Ms?: number },
  providers: Providers,
  standinDelays: StandinDelays,
  endpointingMs: number,
): CapacityBounds {
  return {
    v2v_p95_ms: given.v2vP95Ms ?? (providers === "standin" ? standinV2vFloorMs(standinDelays, endpointingMs) + STANDIN_V2V_HEADROOM_MS : DEFAULT_EMBEDDED_V2V_P95_MS),
    jitter_p95_ms: given.jitterP95Ms ?? DEFAULT_JITTER_P95_MS,
  };
}

/** What a level measured, as the judge needs it. */
export type LevelFigures = Omit<CapacityLevel, "holds" | "crossed">;

/** The figures a level is judged by, from its calls and resource use (`idleRssMb`: the server's before the search; null against --url). */
export function levelFigures(level: LevelResult, idleRssMb: number | null): LevelFigures {
  return {
    concurrency: level.concurrency,
    v2v_p95_ms: summarize(samplesOf(level.calls, "voice_to_voice_ms")).p95,
    jitter_p95_ms: summarize(samplesOf(level.calls, "jitter_ms")).p95,
    failed_calls: level.calls.filter((c) => c.error !== null).length,
    outcomes_not_met: level.calls.filter((c) => c.outcome !== null && c.outcome.required && !c.outcome.passed).length,
    server_cpu_percent_per_call: level.server_cpu_percent_per_call,
    server_rss_mb_per_call: idleRssMb === null || level.server_peak_rss_mb === null ? null : round((level.server_peak_rss_mb - idleRssMb) / level.concurrency),
  };
}

/**
 * A level holds when every call connected and played (no failed calls), voice-to-voice p95 is
 * at most its bound and jitter p95 at most its bound. A level without a voice-to-voice or jitter
 * sample cannot show it keeps the bound: it crosses it.
 */
export function judgeLevel(level: LevelFigures, bounds: CapacityBounds): CapacityLevel {
  const crossed: CapacityBound[] = [];
  if (level.failed_calls > 0) crossed.push("failed_calls");
  if (level.v2v_p95_ms === null || level.v2v_p95_ms > bounds.v2v_p95_ms) crossed.push("v2v_p95");
  if (level.jitter_p95_ms === null || level.jitter_p95_ms > bounds.jitter_p95_ms) crossed.push("jitter_p95");
  return { ...level, holds: crossed.length === 0, crossed };
}

/** The search's outcome from the levels tried in order (it stops at the first that does not hold). */
export function capacityOutcome(levels: readonly CapacityLevel[]): { largest_holding_level: number; stopped_by: CapacityStop } {
  const failing = levels.find((l) => !l.holds);
  const held = levels.slice(0, failing ? levels.indexOf(failing) : levels.length);
  return { largest_holding_level: held.at(-1)?.concurrency ?? 0, stopped_by: failing ? failing.crossed[0]! : "max_level" };
}

const ms = (v: number | null) => (v === null ? "none measured" : `${Math.round(v)} ms`);
const figure = (v: number) => (Math.abs(v) >= 10 ? String(Math.round(v)) : v.toFixed(1));
const CROSSED_TEXT: Record<CapacityBound, (l: CapacityLevel) => string> = {
  failed_calls: (l) => `${l.failed_calls} failed call${l.failed_calls === 1 ? "" : "s"}`,
  v2v_p95: (l) => `v2v p95 (${ms(l.v2v_p95_ms)})`,
  jitter_p95: (l) => `jitter p95 (${ms(l.jitter_p95_ms)})`,
};

/**
 * The summary's line, e.g. "capacity (twilio, embedded, fixed): 10 concurrent calls hold (v2v
 * p95 930 ms <= 1000, jitter p95 4 ms <= 20); 12 crossed v2v p95 (1090 ms); 18% CPU and 41 MB per call".
 */
export function capacityLine(c: CapacityResult): string {
  const head = `capacity (${c.protocol}, ${c.providers}, ${c.endpointing_mode}):`;
  const held = c.levels.find((l) => l.concurrency === c.largest_holding_level && l.holds);
  const failing = c.levels.find((l) => !l.holds);
  const parts: string[] = [];
  parts.push(
    held
      ? `${held.concurrency} concurrent call${held.concurrency === 1 ? "" : "s"} hold (v2v p95 ${ms(held.v2v_p95_ms)} <= ${c.bounds.v2v_p95_ms}, jitter p95 ${ms(held.jitter_p95_ms)} <= ${c.bounds.jitter_p95_ms})`
      : `no level held (bounds: v2v p95 <= ${c.bounds.v2v_p95_ms} ms, jitter p95 <= ${c.bounds.jitter_p95_ms} ms)`,
  );
  if (failing) parts.push(`${failing.concurrency} crossed ${failing.crossed.map((b) => CROSSED_TEXT[b](failing)).join(" and ")}`);
  else parts.push(`every level up to --max ${c.search.max} held (raise --max to look further)`);
  if (held && held.server_cpu_percent_per_call !== null && held.server_rss_mb_per_call !== null) {
    parts.push(`${figure(held.server_cpu_percent_per_call)}% CPU and ${figure(held.server_rss_mb_per_call)} MB per call`);
  }
  return `${head} ${parts.join("; ")}`;
}
