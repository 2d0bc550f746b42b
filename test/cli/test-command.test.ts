import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testCommand } from "../../src/cli/test-command.js";

// `parley test` against a stand-in for the test-run API (the contract of issue 32: POST
// /v1/agents/{id}/test-runs answers the run "running", GET .../test-runs/{run_id} follows it),
// on 127.0.0.1. The real API is tested on its own; this checks what the command sends, how it
// follows the run and what it prints and exits with.

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** What the stand-in answers: a status, a body, headers. */
type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

interface StandIn {
  url: string;
  seen: Seen[];
  close: () => Promise<void>;
}

/** A server on 127.0.0.1 answering each request with `reply` (given every request so far). */
async function standIn(reply: (req: Seen, seen: Seen[]) => Reply): Promise<StandIn> {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const request = { method: req.method!, url: req.url!, authorization: req.headers.authorization, body };
      seen.push(request);
      const r = reply(request, seen);
      res.writeHead(r.status, { "content-type": "application/json", ...r.headers });
      res.end(r.body === undefined ? "" : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const SCENARIOS = {
  scenarios: [
    { name: "books a cleaning", caller: { lines: ["Hi, I'd like to book a cleaning", "Tuesday at 3 pm"] }, expect: { outcome: "appointment_booked" } },
    { name: "asks the hours", caller: { lines: ["When are you open?"] }, expect: { must_say: ["nine"] } },
  ],
};

type Scenario = Record<string, unknown> & { name: string; status: string };

function scenario(name: string, status: string, extra: Record<string, unknown> = {}): Scenario {
  return { name, status, error: null, transcript: [], turns: [], outcome: null, expectations: [], ...extra };
}

function testRun(status: string, scenarios: Scenario[], extra: Record<string, unknown> = {}) {
  return { id: "testrun_1", agent_id: "agent_1", status, created_at: "2025-01-01T00:00:00.000Z", completed_at: status === "running" ? null : "2025-01-01T00:01:00.000Z", error: null, scenarios, ...extra };
}

const BOOKED = scenario("books a cleaning", "passed", {
  outcome: "appointment_booked",
  transcript: [
    { role: "agent", content: "Hello, how can I help?", timestamp: 0.4 },
    { role: "user", content: "Hi, I'd like to book a cleaning", timestamp: 2.1 },
  ],
  expectations: [{ name: "outcome", passed: true, expected: "appointment_booked", seen: "appointment_booked" }],
});
const HOURS_FAILED = scenario("asks the hours", "failed", {
  transcript: [
    { role: "agent", content: "Hello, how can I help?", timestamp: 0.4 },
    { role: "user", content: "When are you open?", timestamp: 2.0 },
    { role: "agent", content: "We open at ten.", timestamp: 3.5 },
  ],
  expectations: [
    { name: "must_say", passed: false, expected: ["nine"], seen: "We open at ten." },
    { name: "max_voice_to_voice_ms", passed: true, expected: 2500, seen: 900 },
  ],
});

/** A run that goes pending -> running -> each scenario finished, then `final` (one step per GET). */
function runningThen(final: ReturnType<typeof testRun>): (req: Seen, seen: Seen[]) => Reply {
  const steps = [
    testRun("running", [scenario("books a cleaning", "running"), scenario("asks the hours", "pending")]),
    testRun("running", [BOOKED, scenario("asks the hours", "running")]),
    final,
  ];
  return (req, seen) => {
    if (req.method === "POST") return { status: 201, body: testRun("running", [scenario("books a cleaning", "pending"), scenario("asks the hours", "pending")]) };
    const gets = seen.filter((s) => s.method === "GET").length;
    return { status: 200, body: steps[Math.min(gets, steps.length) - 1] };
  };
}

let dir: string;
let file: string;
let server: StandIn | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "parley-test-command-"));
  file = path.join(dir, "scenarios.json");
  // Indented as a person would write it: the command sends these bytes, not a re-serialization.
  writeFileSync(file, JSON.stringify(SCENARIOS, null, 2) + "\n");
  vi.stubEnv("PARLEY_API_KEY", "");
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server?.close();
  server = undefined;
});

async function run(...args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await testCommand(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), pollMs: 5 });
  return { code, stdout, stderr };
}

describe("parley test", () => {
  it("sends the file as the POST body with the key, follows the run, prints progress on stderr and PASS lines, exits 0", async () => {
    server = await standIn(runningThen(testRun("passed", [BOOKED, scenario("asks the hours", "passed")])));
    const { code, stdout, stderr } = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "sk_parley_test");
    expect(code).toBe(0);
    const [post, ...gets] = server.seen;
    expect(post).toMatchObject({ method: "POST", url: "/v1/agents/agent_1/test-runs", authorization: "Bearer sk_parley_test" });
    expect(post!.body).toBe(JSON.stringify(SCENARIOS, null, 2) + "\n");
    expect(gets.map((g) => [g.method, g.url, g.authorization])).toEqual(gets.map(() => ["GET", "/v1/agents/agent_1/test-runs/testrun_1", "Bearer sk_parley_test"]));
    expect(stderr).toContain("test run testrun_1 started: 2 scenarios");
    expect(stderr).toMatch(/^\[1\/2\] books a cleaning: passed \(\d+\.\d s\)$/m);
    expect(stderr).toMatch(/^\[2\/2\] asks the hours: passed \(\d+\.\d s\)$/m);
    expect(stdout).toMatch(/^PASS +books a cleaning$/m);
    expect(stdout).toMatch(/^PASS +asks the hours$/m);
    expect(stdout).toContain("test run testrun_1: passed (2 passed, 0 failed, 0 error)");
    // A passed scenario's transcript is not printed.
    expect(stdout).not.toContain("transcript");
  });

  it("takes the key from PARLEY_API_KEY", async () => {
    vi.stubEnv("PARLEY_API_KEY", "sk_parley_from_env");
    server = await standIn(runningThen(testRun("passed", [BOOKED, scenario("asks the hours", "passed")])));
    expect((await run(file, "--agent", "agent_1", "--url", server.url)).code).toBe(0);
    expect(server.seen[0]!.authorization).toBe("Bearer sk_parley_from_env");
  });

  it("prints a failed scenario's failed expectations with expected and seen, and its transcript; exits 1", async () => {
    server = await standIn(runningThen(testRun("failed", [BOOKED, HOURS_FAILED])));
    const { code, stdout, stderr } = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k");
    expect(code).toBe(1);
    expect(stderr).toMatch(/^\[2\/2\] asks the hours: failed \(/m);
    expect(stdout).toMatch(/^PASS +books a cleaning$/m);
    expect(stdout).toMatch(/^FAIL +asks the hours$/m);
    expect(stdout).toContain('must_say: expected ["nine"], seen "We open at ten."');
    // Only the failed expectation.
    expect(stdout).not.toContain("max_voice_to_voice_ms");
    expect(stdout).toContain("transcript:\n          agent: Hello, how can I help?\n          user: When are you open?\n          agent: We open at ten.\n");
    expect(stdout).toContain("test run testrun_1: failed (1 passed, 1 failed, 0 error)");
  });

  it("exits 2 on a run in error, with the run's and the scenario's errors", async () => {
    const final = testRun("error", [BOOKED, scenario("asks the hours", "error", { error: "the agent did not answer" })], { error: "1 scenario could not be carried out" });
    server = await standIn(runningThen(final));
    const { code, stdout, stderr } = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k");
    expect(code).toBe(2);
    expect(stderr).toMatch(/^\[2\/2\] asks the hours: error: the agent did not answer \(/m);
    expect(stdout).toMatch(/^ERROR +asks the hours: the agent did not answer$/m);
    expect(stdout).toContain("test run testrun_1: error (1 passed, 0 failed, 1 error): 1 scenario could not be carried out");
  });

  it("prints --json the final test run object", async () => {
    const final = testRun("failed", [BOOKED, HOURS_FAILED]);
    server = await standIn(runningThen(final));
    const { code, stdout } = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k", "--json");
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toEqual(final);
  });

  it("prints the API's error code, message and fields and exits 2: 404 agent_not_found, 400 invalid_request", async () => {
    server = await standIn((req) =>
      req.url.startsWith("/v1/agents/agent_gone/")
        ? { status: 404, body: { error: { code: "agent_not_found", message: "No agent agent_gone" }, meta: { request_id: "req_1" } } }
        : { status: 400, body: { error: { code: "invalid_request", message: "scenarios[0].name: must be 1-100 characters", details: { fields: [{ field: "scenarios[0].name", message: "must be 1-100 characters" }] } } } },
    );
    const gone = await run(file, "--agent", "agent_gone", "--url", server.url, "--key", "k");
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain("agent_not_found (404): No agent agent_gone");
    expect(gone.stdout).toBe("");
    const invalid = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k");
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain("invalid_request (400): scenarios[0].name: must be 1-100 characters\n  scenarios[0].name: must be 1-100 characters");
    // One POST each, never retried, never polled.
    expect(server.seen.map((s) => s.method)).toEqual(["POST", "POST"]);
  });

  it("exits 2 naming a file that cannot be read or is not JSON, without calling the API", async () => {
    server = await standIn(() => ({ status: 500 }));
    const missing = path.join(dir, "missing.json");
    const unreadable = await run(missing, "--agent", "agent_1", "--url", server.url, "--key", "k");
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain(`cannot read the scenario file ${missing}: ENOENT`);
    const notJson = path.join(dir, "not.json");
    writeFileSync(notJson, "{scenarios: [");
    const bad = await run(notJson, "--agent", "agent_1", "--url", server.url, "--key", "k");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`the scenario file ${notJson} is not JSON`);
    expect(server.seen).toEqual([]);
  });

  it("exits 2 on usage mistakes: no key, no --agent, no file, a --url that is not http", async () => {
    server = await standIn(() => ({ status: 500 }));
    const noKey = await run(file, "--agent", "agent_1", "--url", server.url);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("--key or PARLEY_API_KEY is required");
    expect((await run(file, "--url", server.url, "--key", "k")).stderr).toContain("--agent is required");
    expect((await run("--agent", "agent_1", "--url", server.url, "--key", "k")).code).toBe(2);
    const ftp = await run(file, "--agent", "agent_1", "--url", "ftp://127.0.0.1/", "--key", "k");
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain("--url must be http:// or https://");
    expect((await run(file, "--agent", "agent_1", "--key", "k", "--timeout-s", "0")).stderr).toContain("--timeout-s must be an integer >= 1");
    expect(server.seen).toEqual([]);
  });

  it("gives up after --timeout-s with exit 2, saying the run goes on and its id", async () => {
    server = await standIn((req) => ({ status: req.method === "POST" ? 201 : 200, body: testRun("running", [scenario("books a cleaning", "running")]) }));
    const { code, stdout, stderr } = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k", "--timeout-s", "1");
    expect(code).toBe(2);
    expect(stderr).toContain("the test run testrun_1 is still running after --timeout-s 1; it goes on on the server: GET ");
    expect(stdout).toBe("");
  });

  it("waits out a 429 while polling and goes on", async () => {
    const final = testRun("passed", [BOOKED, scenario("asks the hours", "passed")]);
    server = await standIn((req, seen) => {
      if (req.method === "POST") return { status: 201, body: testRun("running", [scenario("books a cleaning", "running"), scenario("asks the hours", "pending")]) };
      return seen.filter((s) => s.method === "GET").length === 1
        ? { status: 429, body: { error: { code: "rate_limited", message: "Too many requests" } } }
        : { status: 200, body: final };
    });
    const { code, stdout } = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^PASS +asks the hours$/m);
  });

  it("does not follow a redirect: the key goes to the --url given only", async () => {
    const elsewhere = await standIn(() => ({ status: 201, body: testRun("passed", []) }));
    try {
      server = await standIn(() => ({ status: 307, headers: { location: `${elsewhere.url}/v1/agents/agent_1/test-runs` } }));
      const { code, stderr } = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "sk_parley_secret");
      expect(code).toBe(2);
      expect(stderr).toContain("the server answered 307 (a redirect, not followed");
      expect(elsewhere.seen).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });

  it("prints what the server sent as text, never as terminal control sequences", async () => {
    const hostile = scenario("asks the hours", "failed", {
      transcript: [{ role: "agent", content: "\u001b]0;pwned\u0007We open\u009b2J at ten.\u202e", timestamp: 1 }],
      expectations: [{ name: "must_say", passed: false, expected: ["nine"], seen: "\u001b[2Jten\u009b" }],
    });
    server = await standIn(runningThen(testRun("failed", [BOOKED, hostile])));
    const text = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k");
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("agent: \\x1b]0;pwned\\x07We open\\x9b2J at ten.\\u202e");
    expect(text.stdout).toContain('seen "\\u001b[2Jten\\u009b"');
    const json = await run(file, "--agent", "agent_1", "--url", server.url, "--key", "k", "--json");
    for (const out of [text.stdout, text.stderr, json.stdout]) expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    // Escaped, the JSON still holds what the server sent.
    expect((JSON.parse(json.stdout) as { scenarios: Array<{ transcript: Array<{ content: string }> }> }).scenarios[1]!.transcript[0]!.content).toBe("\u001b]0;pwned\u0007We open\u009b2J at ten.\u202e");
  });
});
