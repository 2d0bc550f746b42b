import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * A conversation script (fixtures/conversations/*.json): the agent to create, what the caller
 * does step by step, and the outcome the call must reach. Fields are snake_case like the API.
 */
export type Step =
  /**
   * Speak fixture lines (joined by `gap_ms` of silence, default 0) once the agent has gone
   * quiet. `timed: false` keeps the reply out of the voice-to-voice figures: for audio that
   * does not end in speech (a voicemail beep), its end is not where the turn's latency starts.
   */
  | { say: string[]; gap_ms?: number; over_agent_ms?: never; timed?: boolean }
  /** Speak over the agent: `over_agent_ms` after its audio started. */
  | { say: string[]; gap_ms?: number; over_agent_ms: number }
  | { dtmf: string }
  | { silence_ms: number };

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
}

export function loadConversations(dir: string): Conversation[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const raw = JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Partial<Conversation>;
      if (typeof raw.name !== "string" || !Array.isArray(raw.steps) || typeof raw.expect !== "object") throw new Error(`${f}: needs name, steps and expect`);
      return { description: "", quick: false, line_noise_rms: 0, agent: {}, ...raw } as Conversation;
    });
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
