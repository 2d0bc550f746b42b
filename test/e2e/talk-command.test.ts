import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import { PocketsphinxProvider } from "../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { runCli } from "../../scripts/parley-process.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio/book-appointment.16k.wav");

let app: TestApp;
let acct: TestAccount;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" });
  acct = await app.account();
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** What the embedded recognizer hears in a 16 kHz WAV. */
async function recognise(file: string): Promise<string> {
  const { samples, sampleRate } = parseWav(readFileSync(file));
  const asr = new PocketsphinxProvider({ maxRecognizers: 1 });
  const session = await asr.open({ language: "en-US", signal: new AbortController().signal });
  async function* frames() {
    for (let i = 0; i < samples.length; i += 320) yield { samples: samples.subarray(i, i + 320), sampleRate };
  }
  let text = "";
  for await (const result of session.transcribe(frames(), new AbortController().signal)) if (result.type === "final") text = result.text;
  await session.close();
  await asr.close();
  return text;
}

describe("parley talk", () => {
  it("speaks a WAV file to an agent and writes the reply, which the recognizer reads back", async () => {
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Booker", system_prompt: "You book appointments.", voice_id: "flite-rms", metadata: { services: ["cleaning"] } },
    });
    const output = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-talk-")), "heard.wav");
    const result = await runCli(["talk", "--agent", agent.body.id, "--url", app.baseUrl, "--input", FIXTURE, "--output", output, "--wait-ms", "1500"], {
      PARLEY_API_KEY: acct.key,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/you {2}: i would like to book an appointment/);
    expect(result.stdout).toMatch(/agent: .*appointment/i);
    expect(result.stdout).toMatch(/voice-to-voice \d+ ms/);

    const reply = parseWav(readFileSync(output));
    expect(reply.sampleRate).toBe(16000);
    expect(reply.samples.length / 16000).toBeGreaterThan(1);
    const heard = await recognise(output);
    expect(heard).toMatch(/appointment/);
  }, 90_000);

  /**
   * `talk --input` without `--output` plays the agent through sox's `play`; a player that is not
   * there or goes away at once (no sound device) is said once on stderr, and the call goes on.
   */
  async function talkWithoutPlayer(pathVariable: string) {
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Booker", system_prompt: "You book appointments.", voice_id: "flite-rms", metadata: { services: ["cleaning"] } },
    });
    const result = await runCli(["talk", "--agent", agent.body.id, "--url", app.baseUrl, "--input", FIXTURE, "--wait-ms", "1500"], {
      PARLEY_API_KEY: acct.key,
      PATH: pathVariable,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/you {2}: i would like to book an appointment/);
    expect(result.stdout).toMatch(/agent: .*appointment/i);
    const lines = result.stderr.split("\n").filter((line) => line !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^parley talk: the audio player \(sox's play\) stopped: .*; the call goes on without sound; use --output FILE to keep the audio$/);
    return lines[0]!;
  }

  // Two calls at once (CI time): each is a talk session of its own against the service.
  describe.concurrent("without a sound device", () => {
    it("goes on without sound when sox's play is not installed", async () => {
      // The CLI runs with this Node's absolute path: an empty PATH only hides play.
      const line = await talkWithoutPlayer(mkdtempSync(path.join(os.tmpdir(), "parley-no-play-")));
      expect(line).toContain("not installed");
    }, 90_000);

    it("goes on without sound when play stops reading (no sound device)", async () => {
      // Its stdin closed while it still runs, as a play that failed to open the device and is on
      // its way out: the agent's audio written to it gets EPIPE, which unhandled killed the
      // process before the caller's words were printed. It runs until the command stops it.
      const bin = mkdtempSync(path.join(os.tmpdir(), "parley-fake-play-"));
      writeFileSync(path.join(bin, "play"), "#!/bin/sh\nexec 0<&-\nexec sleep 60\n");
      chmodSync(path.join(bin, "play"), 0o755);
      const line = await talkWithoutPlayer(`${bin}${path.delimiter}${process.env.PATH ?? ""}`);
      expect(line).toContain("EPIPE");
    }, 90_000);
  });

  it("says clearly when the key is missing", async () => {
    const result = await runCli(["talk", "--agent", "agent_x", "--url", app.baseUrl], { PARLEY_API_KEY: "" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("PARLEY_API_KEY");
  });
});
