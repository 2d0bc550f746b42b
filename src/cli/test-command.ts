import { readFileSync } from "node:fs";
import { integer, parseOptionsAndTarget, required, UsageError } from "./args.js";
import { FINISHED_SCENARIO, progressLine, renderTestRun, terminalSafe, terminalSafeJson, type TestRun } from "./test-run-report.js";

export { TEST_USAGE } from "./usage.js";

// `parley test FILE.json --agent ID`: runs an agent's test scenarios through the API
// (POST /v1/agents/{id}/test-runs), follows the run until it ends, and prints its result.
// Exit code: 0 passed, 1 failed, 2 error or anything else gone wrong.

/** Where the command writes, and how often it asks (tests answer faster than a second). */
export interface TestCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Between two GETs of the run. */
  pollMs: number;
}

const DEFAULT_IO: TestCommandIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  pollMs: 1000,
};

/** One request's longest wait: a server that stops answering is not waited for until --timeout-s. */
const REQUEST_TIMEOUT_MS = 30_000;
/** GETs of the run that may fail in a row (429, 502-504, no connection) before the command gives up. */
const MAX_POLL_FAILURES = 10;
const RETRYABLE = new Set([429, 502, 503, 504]);

/** Something that ends the command with exit code 2 after printing its message. */
class CommandFailure extends Error {}

/** An answer of the API. */
interface Answer {
  status: number;
  body: unknown;
  retryAfterMs?: number;
}

/** `parley test`: returns the exit code. */
export async function testCommand(argv: string[], io: Partial<TestCommandIo> = {}): Promise<number> {
  const out: TestCommandIo = { ...DEFAULT_IO, ...io };
  try {
    return await run(argv, out);
  } catch (err) {
    if (err instanceof UsageError) {
      out.stderr(`parley test: ${terminalSafe(err.message)}\n(parley test --help for its usage)\n`);
      return 2;
    }
    if (err instanceof CommandFailure) {
      out.stderr(`parley test: ${err.message.split("\n").map(terminalSafe).join("\n")}\n`);
      return 2;
    }
    throw err;
  }
}

async function run(argv: string[], out: TestCommandIo): Promise<number> {
  const { values: o, target: file } = parseOptionsAndTarget(
    argv,
    { agent: { type: "string" }, url: { type: "string" }, key: { type: "string" }, "timeout-s": { type: "string" }, json: { type: "boolean" } },
    "scenario file (FILE.json)",
  );
  const agentId = required(o, "agent");
  const key = o.key ?? process.env.PARLEY_API_KEY;
  if (!key) throw new UsageError("--key or PARLEY_API_KEY is required");
  const base = baseUrl(o.url ?? "http://localhost:8080");
  const timeoutS = integer(o["timeout-s"], "timeout-s", 1) ?? 600;
  const body = scenarioFile(file);
  const deadline = Date.now() + timeoutS * 1000;
  const runs = `${base}/v1/agents/${encodeURIComponent(agentId)}/test-runs`;
  const api = (method: string, url: string, json?: string) => request(method, url, key, json, deadline);

  // The file's own text is sent: what the server checks is exactly what the user wrote.
  const created = await api("POST", runs, body);
  if (created.status !== 201) throw new CommandFailure(apiErrorText(created));
  let current = testRunOf(created.body);
  const runUrl = `${runs}/${encodeURIComponent(current.id)}`;
  const total = current.scenarios?.length ?? 0;
  out.stderr(`${terminalSafe(`test run ${current.id} started: ${total} scenario${total === 1 ? "" : "s"}`)}\n`);

  const progress = new Progress(out, total);
  progress.update(current);
  let failures = 0;
  while (current.status === "running") {
    if (Date.now() >= deadline) throw new CommandFailure(stillGoing(current.id, timeoutS, runUrl));
    await sleep(Math.min(out.pollMs, deadline - Date.now()));
    let answer: Answer;
    try {
      answer = await api("GET", runUrl);
    } catch (err) {
      if (!(err instanceof CommandFailure) || ++failures > MAX_POLL_FAILURES) throw err;
      continue;
    }
    if (RETRYABLE.has(answer.status) && ++failures <= MAX_POLL_FAILURES) {
      // The server asks to wait (rate limit, restarting): as long as it says, within the deadline.
      if (answer.retryAfterMs) await sleep(Math.min(answer.retryAfterMs, deadline - Date.now()));
      continue;
    }
    if (answer.status !== 200) throw new CommandFailure(`${apiErrorText(answer)}\n(the test run ${current.id} may still be going: GET ${runUrl})`);
    failures = 0;
    current = testRunOf(answer.body);
    progress.update(current);
  }

  out.stdout(o.json ? `${terminalSafeJson(current, 2)}\n` : `${renderTestRun(current)}\n`);
  return current.status === "passed" ? 0 : current.status === "failed" ? 1 : 2;
}

/** The --url as the base of the API's paths: http or https only, no trailing slash. */
function baseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url ${value} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--url must be http:// or https://, not ${url.protocol}`);
  if (url.username || url.password) throw new UsageError("--url must not hold credentials: give the key with --key or PARLEY_API_KEY");
  url.search = "";
  url.hash = "";
  return url.href.replace(/\/+$/, "");
}

/** The scenario file's text, once it is known to be JSON. */
function scenarioFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new CommandFailure(`cannot read the scenario file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    JSON.parse(text);
  } catch (err) {
    throw new CommandFailure(`the scenario file ${file} is not JSON: ${(err as Error).message}`);
  }
  return text;
}

/**
 * One request to the API. Redirects are refused: the key goes to the --url given and nowhere
 * else, and a POST is not silently sent again.
 */
async function request(method: string, url: string, key: string, body: string | undefined, deadline: number): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${key}`, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(Math.max(1000, Math.min(REQUEST_TIMEOUT_MS, deadline - Date.now()))),
    });
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause;
    throw new CommandFailure(`cannot reach ${new URL(url).origin}: ${cause?.message ?? (err as Error).message}`);
  }
  const text = await res.text().catch(() => "");
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): shown as text in the error.
  }
  const retryAfter = Number(res.headers.get("retry-after"));
  return { status: res.status, body: parsed, retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined };
}

/** An error answer as `code: message` with the fields the details name, one a line. */
function apiErrorText(answer: Answer): string {
  const error = (answer.body as { error?: { code?: unknown; message?: unknown; details?: { fields?: unknown } } } | null)?.error;
  if (answer.status >= 300 && answer.status < 400) return `the server answered ${answer.status} (a redirect, not followed: give the API's own address as --url)`;
  if (!error || typeof error !== "object") {
    const text = typeof answer.body === "string" ? answer.body.slice(0, 200) : JSON.stringify(answer.body)?.slice(0, 200);
    return `the server answered ${answer.status}${text ? `: ${text}` : ""}`;
  }
  const lines = [`${String(error.code)} (${answer.status}): ${String(error.message)}`];
  const fields = error.details?.fields;
  if (Array.isArray(fields)) {
    for (const f of fields as Array<{ field?: unknown; message?: unknown }>) lines.push(`  ${String(f.field)}: ${String(f.message)}`);
  }
  return lines.join("\n");
}

/** The answer's test run, checked enough to be followed. */
function testRunOf(body: unknown): TestRun {
  const run = body as Partial<TestRun> | null;
  if (!run || typeof run !== "object" || typeof run.id !== "string" || typeof run.status !== "string" || (run.scenarios !== undefined && !Array.isArray(run.scenarios))) {
    throw new CommandFailure(`the server's answer is not a test run: ${JSON.stringify(body)?.slice(0, 200)}`);
  }
  return run as TestRun;
}

function stillGoing(id: string, timeoutS: number, url: string): string {
  return `the test run ${id} is still running after --timeout-s ${timeoutS}; it goes on on the server: GET ${url}`;
}

/**
 * The progress lines on stderr: one per scenario as it finishes, in the order they finish.
 * The time is the command's own measure, from when it first saw the scenario under way (or
 * the poll before, when it started and finished between two polls).
 */
class Progress {
  private readonly reported = new Set<number>();
  private readonly startedAt = new Map<number, number>();
  private lastPoll = Date.now();

  constructor(
    private readonly out: TestCommandIo,
    private readonly total: number,
  ) {}

  update(run: TestRun): void {
    const now = Date.now();
    for (const [i, scenario] of (run.scenarios ?? []).entries()) {
      if (this.reported.has(i)) continue;
      if (scenario.status === "running" && !this.startedAt.has(i)) this.startedAt.set(i, now);
      if (!FINISHED_SCENARIO.has(scenario.status)) continue;
      this.reported.add(i);
      const seconds = (now - (this.startedAt.get(i) ?? this.lastPoll)) / 1000;
      this.out.stderr(`${progressLine(this.reported.size, this.total, scenario, seconds)}\n`);
    }
    this.lastPoll = now;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
