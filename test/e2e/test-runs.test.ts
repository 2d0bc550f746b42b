import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Agent test runs (issue 32) end to end: `parley test` (the built CLI) sends a scenario file to
// a service running the embedded engines; each scenario is a call between the agent (the rules
// dialogue, Flite, pocketsphinx) and a simulated caller saying its lines in Flite's rms voice.
// The documented scenario file is played with one expectation added: one scenario passes (a
// booking, checked but not stored); one fails on purpose (a phrase the agent never says), said
// over background noise and talking over the agent's greeting, its question an uploaded recording.
// The noise is the documented 30 dB: at 25 the recognizer heard "what are you in ours" in a CI
// run (4 of 40 noises miss "hours" at 25 dB, none at 30: docs/test-runs.md).

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../dist/src/cli/main.js");
const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio");
const FAQ = [{ question: "What are your opening hours?", answer: "We are open from eight to six, Monday to Saturday." }];

/** The documented scenario file (docs/test-runs.md), with one expectation added that fails on purpose. */
const DOCUMENTED = JSON.parse(readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../docs/examples/test-scenarios.json"), "utf8"));
const SCENARIOS = structuredClone(DOCUMENTED);
SCENARIOS.scenarios[1].expect.must_say.push("we deliver pizza");

let app: TestApp;
let acct: TestAccount;
let agentId: string;
let dir: string;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" });
  acct = await app.account();
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Ava", system_prompt: "You answer calls for Acme Dental.", voice_id: "flite-kal", first_message: "Hello, this is Ava from Acme Dental.", metadata: { business_name: "Acme Dental", services: ["cleaning", "checkup"], faq: FAQ } },
  });
  agentId = agent.body.id;
  dir = mkdtempSync(path.join(tmpdir(), "parley-test-runs-"));
}, 60_000);

afterAll(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the built `parley test`; resolves with its exit code and output. */
function parleyTest(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "test", ...args], { env: { ...process.env, PARLEY_API_KEY: acct.key } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("an agent test run", () => {
  it("plays each scenario against the agent; parley test reports the failing expectation with its transcript and exits 1", async () => {
    // The question over the greeting is played from a recording uploaded for it (the fixture's
    // 16 kHz WAV, kept at 8 kHz), not said in a voice.
    const upload = await app.request("POST", "/v1/test-audio?name=opening-hours.wav", { key: acct.key, rawBody: readFileSync(path.join(FIXTURES, "opening-hours.16k.wav")), headers: { "content-type": "audio/wav" } });
    expect(upload.status, JSON.stringify(upload.body)).toBe(201);
    SCENARIOS.scenarios[1].caller.lines[0] = { audio_id: upload.body.id };
    const file = path.join(dir, "scenarios.json");
    writeFileSync(file, JSON.stringify(SCENARIOS));
    const run = await parleyTest([file, "--agent", agentId, "--url", app.baseUrl, "--timeout-s", "170"]);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(/PASS.*books a cleaning/);
    expect(run.stdout).toMatch(/FAIL.*hours, in noise, over the greeting/);
    expect(run.stdout).toContain("must_say: we deliver pizza");
    expect(run.stderr).toMatch(/\[2\/2\]/);

    // The run as the API keeps it.
    const list = await app.request("GET", `/v1/agents/${agentId}/test-runs`, { key: acct.key });
    expect(list.body.data).toHaveLength(1);
    const stored = list.body.data[0];
    expect(stored).toMatchObject({ status: "failed", error: null, completed_at: expect.any(String) });
    const [booking, hours] = stored.scenarios;
    const heard = (s: { transcript: Array<{ role: string; content: string }> }) => s.transcript.map((t) => `${t.role}: ${t.content}`).join("\n");
    expect(booking.status, heard(booking)).toBe("passed");
    expect(booking.outcome).toBe("appointment_booked");
    expect(booking.expectations.map((e: { name: string }) => e.name)).toEqual([
      "outcome",
      "must_say: is booked for",
      "max_voice_to_voice_ms",
      "appointment.service",
      "appointment.weekday",
      "appointment.time",
      "appointment.customer_name",
    ]);
    // Each caller line answered, as the caller heard it.
    expect(booking.turns).toHaveLength(4);
    for (const turn of booking.turns.slice(0, 3)) expect(turn.voice_to_voice_ms).toBeGreaterThan(0);

    expect(hours.status, heard(hours)).toBe("failed");
    expect(hours.expectations, heard(hours)).toEqual([
      { name: "must_say: monday to saturday", passed: true, expected: "monday to saturday", seen: "monday to saturday" },
      { name: "must_say: we deliver pizza", passed: false, expected: "we deliver pizza", seen: null },
      { name: "must_not_say: pizza", passed: true, expected: "pizza", seen: null },
    ]);
    // Heard through the noise well enough to be answered; the greeting was cut short where the caller spoke over it.
    expect(heard(hours)).toMatch(/user: .*hours/);
    expect(hours.transcript[0]).toMatchObject({ role: "agent" });
    expect(hours.transcript[0].content.length).toBeLessThan("Hello, this is Ava from Acme Dental.".length);

    // Nothing a test caller said became the account's: no call, no appointment; the end is an event.
    expect((await app.request("GET", "/v1/calls", { key: acct.key })).body.total).toBe(0);
    expect((await app.request("GET", "/v1/appointments", { key: acct.key })).body.total).toBe(0);
    const events = (await app.request("GET", "/v1/events?name=test_run.completed", { key: acct.key })).body.data;
    expect(events.map((e: { data: { id: string } }) => e.data.id)).toEqual([stored.id]);
  }, 180_000);
});
