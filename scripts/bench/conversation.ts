import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { EndpointingMode as EngineEndpointingMode } from "../../engine/index.js";

/**
 * The endpointing modes the benchmark compares, in its default order, with the
 * `endpointing_ms` each mode's agents get: `fixed` ends the caller's turn after that much
 * silence; `adaptive` after a short pause when the words form a complete turn, and waits up to
 * that much when they do not.
 */
export const BENCH_ENDPOINTING_MS = Object.freeze({ fixed: 500, adaptive: 1500 } as const satisfies Record<EngineEndpointingMode, number>);
export type EndpointingMode = keyof typeof BENCH_ENDPOINTING_MS;
export const BENCH_ENDPOINTING_MODES = Object.keys(BENCH_ENDPOINTING_MS) as EndpointingMode[];

/**
 * A conversation script (fixtures/conversations/*.json): the agent to create, what the caller
 * does step by step, and the outcome the call must reach. Fields are snake_case like the API.
 */
export type Step =
  /**
   * Speak fixture lines (joined by `gap_ms` of silence, default 0, or by `gaps_ms`, one
   * silence per pair of lines) once the agent has gone quiet. `timed: false` keeps the reply
   * out of the voice-to-voice figures: for audio that does not end in speech (a voicemail
   * beep), its end is not where the turn's latency starts.
   */
  | { say: string[]; gap_ms?: number; gaps_ms?: number[]; over_agent_ms?: never; timed?: boolean }
  /**
   * Speak over the agent: `over_agent_ms` after its audio started (the first agent audio after
   * the previous step; steps over the agent in a row are all timed from the same start, the
   * first agent audio after the last step of another kind, so two backchannels during one long
   * agent turn are both timed from that turn's start).
   */
  | { say: string[]; gap_ms?: number; gaps_ms?: number[]; over_agent_ms: number }
  | { dtmf: string }
  | { silence_ms: number };

export type SayStep = Extract<Step, { say: string[] }>;

export interface Expectation {
  /** A tool call the agent makes, with arguments that must match (a subset; see resolveExpectedValue). */
  tool_call?: { name: string; arguments?: Record<string, unknown> };
  end_reason?: string;
  interrupted?: boolean;
  /** Words the agent must say (lower case, anywhere in its transcript). */
  agent_says?: string;
  user_turns?: number;
}

export interface Conversation {
  name: string;
  description: string;
  /** Part of `--quick`. */
  quick: boolean;
  /** White noise mixed into the caller's line, RMS in PCM16 units (0: clean). */
  line_noise_rms: number;
  /** Fields of POST /v1/agents on top of the runner's defaults. */
  agent: Record<string, unknown>;
  steps: Step[];
  /** Checked on both protocols (Twilio calls through the REST API, see observe-twilio-call.ts). */
  expect: Expectation;
  /**
   * The endpointing modes in which a call must meet `expect` (default: every mode). In the
   * others the outcome is still checked and recorded, as not required: a pause mid-sentence
   * longer than `fixed`'s 500 ms splits the caller's turn there, by design.
   */
  expect_modes?: EndpointingMode[];
}

export function loadConversations(dir: string): Conversation[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const raw = JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Partial<Conversation>;
      if (typeof raw.name !== "string" || !Array.isArray(raw.steps) || typeof raw.expect !== "object") throw new Error(`${f}: needs name, steps and expect`);
      for (const step of raw.steps) if ("say" in step) gapsOf(step, f);
      const unknownModes = (raw.expect_modes ?? []).filter((m) => !BENCH_ENDPOINTING_MODES.includes(m));
      if (unknownModes.length) throw new Error(`${f}: expect_modes: unknown ${unknownModes.join(", ")} (modes: ${BENCH_ENDPOINTING_MODES.join(", ")})`);
      return { description: "", quick: false, line_noise_rms: 0, agent: {}, ...raw } as Conversation;
    });
}

/** The silence (ms) after each line of a `say` step but the last: `gaps_ms`, else `gap_ms` (default 0) each. */
export function gapsOf(step: SayStep, where = "conversation"): number[] {
  if (step.gaps_ms === undefined) return step.say.slice(1).map(() => step.gap_ms ?? 0);
  if (step.gap_ms !== undefined) throw new Error(`${where}: a say step takes gap_ms or gaps_ms, not both`);
  if (step.gaps_ms.length !== step.say.length - 1 || step.gaps_ms.some((g) => !Number.isInteger(g) || g < 0)) {
    throw new Error(`${where}: gaps_ms needs ${step.say.length - 1} whole numbers >= 0 (one per pair of lines in ${JSON.stringify(step.say)})`);
  }
  return step.gaps_ms;
}

/** Whether `mode`'s calls of this conversation must meet its expectations. */
export function expectedIn(conversation: Pick<Conversation, "expect_modes">, mode: EndpointingMode): boolean {
  return conversation.expect_modes === undefined || conversation.expect_modes.includes(mode);
}

/** Fixture lines a conversation uses, for loading their audio once. */
export function linesOf(conversation: Conversation): string[] {
  return conversation.steps.flatMap((s) => ("say" in s ? s.say : []));
}

/**
 * `{"$next_weekday": 2}` in an expected argument is the next such weekday after today (UTC),
 * as the rules dialogue resolves a bare weekday; anything else is compared as is.
 */
export function resolveExpectedValue(value: unknown, now = new Date()): unknown {
  if (value && typeof value === "object" && "$next_weekday" in value) {
    const weekday = Number((value as { $next_weekday: number }).$next_weekday);
    const ahead = (weekday - now.getUTCDay() + 7) % 7 || 7;
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + ahead)).toISOString().slice(0, 10);
  }
  return value;
}
