import type { CallOutcome, FieldValue, TranscriptSegment } from "../../engine/index.js";

/** Limits of a test run: what one request may ask, and how much an account may run. */
export const TEST_RUN_LIMITS = {
  scenariosPerRun: 10,
  linesPerScenario: 20,
  lineChars: 500,
  phrases: 20,
  phraseChars: 200,
  /** Runs an account may have going at once. */
  runningPerAccount: 2,
  /** Scenarios an account may run in 24 hours. */
  scenariosPerDay: 200,
} as const;

/** A caller's line: text said in the scenario's voice, or an uploaded recording (POST /v1/test-audio). */
export type CallerLine = string | { audio_id: string };

/** The simulated caller of a scenario: what it says, in which voice, how. */
export interface ScenarioCaller {
  lines: CallerLine[];
  /** An embedded voice id (flite-*, festival-*). */
  voice: string;
  /** Agent silence before the next line. */
  pause_ms: number;
  /** Background noise at this signal-to-noise ratio (dB); null: none. */
  noise_db: number | null;
  /** Indexes of the lines said over the agent instead of after it. */
  barge_in: number[];
}

/** What the booked appointment should be; every key optional. */
export interface ExpectedAppointment {
  service?: string | undefined;
  date?: string | undefined;
  weekday?: string | undefined;
  time?: string | undefined;
  customer_name?: string | undefined;
}

/** What a scenario is expected to bring about; every key optional. */
export interface ScenarioExpectations {
  outcome?: CallOutcome | undefined;
  extracted_data?: Record<string, FieldValue> | undefined;
  must_say?: string[] | undefined;
  must_not_say?: string[] | undefined;
  max_voice_to_voice_ms?: number | undefined;
  appointment?: ExpectedAppointment | undefined;
}

export interface TestScenario {
  name: string;
  caller: ScenarioCaller;
  expect: ScenarioExpectations;
}

/** One expectation checked: what was asked, what the call showed. */
export interface ExpectationResult {
  name: string;
  passed: boolean;
  expected: unknown;
  seen: unknown;
}

export type ScenarioStatus = "pending" | "running" | "passed" | "failed" | "error";
export type TestRunStatus = "running" | "passed" | "failed" | "error";

/** What a scenario came to (its place in the run's `scenarios`). */
export interface ScenarioResult {
  name: string;
  status: ScenarioStatus;
  error: string | null;
  transcript: TranscriptSegment[] | null;
  /** Per caller line: how long the agent took to answer it, as the caller heard (null: no answer). */
  turns: Array<{ line: number; voice_to_voice_ms: number | null }>;
  outcome: CallOutcome | null;
  expectations: ExpectationResult[];
}

export function pendingResult(scenario: TestScenario): ScenarioResult {
  return { name: scenario.name, status: "pending", error: null, transcript: null, turns: [], outcome: null, expectations: [] };
}

/** A run's status from its scenarios': any error makes it `error`, else any failure `failed`. */
export function runStatus(results: readonly ScenarioResult[]): TestRunStatus {
  if (results.some((r) => r.status === "error")) return "error";
  if (results.some((r) => r.status === "failed")) return "failed";
  return "passed";
}
