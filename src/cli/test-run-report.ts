// How `parley test` shows a test run (POST/GET /v1/agents/{id}/test-runs) to a person: the
// progress line of a finished scenario and the final result. Every string shown came from the
// server (transcripts are what the agent's model said and the recognizer heard), so each is
// shown through `terminalSafe`: a control character cannot move the cursor, rewrite earlier
// lines or set the terminal's title.

/** The parts of a test run this module reads (the contract: docs/api-resources.md, test runs). */
export interface TestRun {
  id: string;
  status: string;
  error?: string | null;
  scenarios?: TestScenario[];
}

export interface TestScenario {
  name: string;
  status: string;
  error?: string | null;
  transcript?: Array<{ role: string; content: string }>;
  expectations?: Array<{ name: string; passed: boolean; expected?: unknown; seen?: unknown }>;
}

/** A scenario's statuses once it has finished (before: pending, running). */
export const FINISHED_SCENARIO = new Set(["passed", "failed", "error"]);

// C0 and C1 controls, DEL, and the bidirectional overrides and isolates (which reorder what
// follows them on the line).
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with each control character written out (`\x1b`, `\u202e`), so printing it only prints. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * `value` as JSON with the C1 controls and the bidirectional characters escaped too
 * (JSON.stringify escapes only those below U+0020): the same JSON value, safe on a terminal.
 */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? "null").replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `[2/3] books a cleaning: passed (41.2 s)`: the `done`th of `total` scenarios to finish. */
export function progressLine(done: number, total: number, scenario: TestScenario, seconds: number): string {
  const error = scenario.status === "error" && scenario.error ? `: ${scenario.error}` : "";
  return terminalSafe(`[${done}/${total}] ${scenario.name}: ${scenario.status}${error} (${seconds.toFixed(1)} s)`);
}

const LABELS: Record<string, string> = { passed: "PASS", failed: "FAIL", error: "ERROR" };

/** The run's result for a person: a line per scenario, what failed and the transcript of a scenario that did not pass, then a summary line. */
export function renderTestRun(run: TestRun): string {
  const lines: string[] = [];
  const scenarios = run.scenarios ?? [];
  for (const scenario of scenarios) {
    const label = LABELS[scenario.status] ?? "NOT RUN";
    lines.push(`${label.padEnd(7)} ${scenario.name}${scenario.error ? `: ${scenario.error}` : ""}`);
    if (scenario.status === "passed") continue;
    for (const e of scenario.expectations ?? []) {
      if (e.passed) continue;
      lines.push(`        ${e.name}: expected ${terminalSafeJson(e.expected ?? null)}, seen ${terminalSafeJson(e.seen ?? null)}`);
    }
    const transcript = scenario.transcript ?? [];
    if (transcript.length > 0) {
      lines.push("        transcript:");
      // One line per turn: a newline inside a turn must not start a line of its own.
      for (const t of transcript) lines.push(`          ${t.role}: ${String(t.content).replace(/\r?\n/g, " ")}`);
    }
  }
  const count = (status: string) => scenarios.filter((s) => s.status === status).length;
  const counts = [`${count("passed")} passed`, `${count("failed")} failed`, `${count("error")} error`];
  const notRun = scenarios.length - count("passed") - count("failed") - count("error");
  if (notRun > 0) counts.push(`${notRun} not run`);
  lines.push(`test run ${run.id}: ${run.status} (${counts.join(", ")})${run.error ? `: ${run.error}` : ""}`);
  return lines.map(terminalSafe).join("\n");
}
