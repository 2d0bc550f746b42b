import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../engine/audio/wav.js";
import type { StartedTestRun } from "../../src/services/test-runs.js";
import { recordTestRuns } from "../helpers/recorded-test-runs.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Test audio (issue 32): recordings a test run's caller plays as a line ({audio_id}) instead
// of text said in an embedded voice. Kept as 8 kHz mono PCM16 in the database.

let app: TestApp;
let acct: TestAccount;
let other: TestAccount;
let agentId: string;
let started: StartedTestRun[];

/** `seconds` of a 440 Hz tone as a WAV file. */
function wav(seconds: number, sampleRate = 16000, channels = 1): Buffer {
  const frames = Math.round(seconds * sampleRate);
  const samples = new Int16Array(frames * channels);
  for (let i = 0; i < frames; i++) for (let c = 0; c < channels; c++) samples[i * channels + c] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate));
  return encodeWav({ sampleRate, channels, samples });
}

async function upload(body: Buffer | string, name = "clip.wav", key = acct.key, type = "audio/wav") {
  const res = await fetch(`${app.baseUrl}/v1/test-audio?name=${encodeURIComponent(name)}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": type }, body });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  app = await startTestApp();
  acct = await app.account();
  other = await app.account();
  agentId = (await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Desk", system_prompt: "x", voice_id: "flite-slt" } })).body.id;
  started = recordTestRuns(app);
});
afterAll(async () => {
  await app.close();
});

describe("test audio", () => {
  it("takes a WAV at any rate from 8 to 48 kHz, mono or stereo, and keeps it at 8 kHz mono", async () => {
    const mono = await upload(wav(1.5));
    expect(mono.status, JSON.stringify(mono.body)).toBe(201);
    expect(mono.body).toMatchObject({ id: expect.stringMatching(/^taud_/), name: "clip.wav", duration_ms: 1500 });
    const stereo = await upload(wav(2, 48000, 2), "stereo.wav");
    expect(stereo.body.duration_ms).toBe(2000);
    const samples = await app.parley.services.testAudio.samples(acct.id, stereo.body.id);
    expect(samples.length).toBe(16000);
    expect((await app.request("GET", `/v1/test-audio/${mono.body.id}`, { key: acct.key })).body).toEqual(mono.body);
    const list = await app.request("GET", "/v1/test-audio", { key: acct.key });
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([stereo.body.id, mono.body.id]);
  });

  it("refuses what it cannot play, saying why", async () => {
    const cases: Array<[Buffer | string, string, number, string]> = [
      ["not a wav at all", "audio/wav", 400, "invalid_audio"],
      [wav(61, 8000), "audio/wav", 400, "invalid_audio"],
      [wav(1, 96000), "audio/wav", 400, "invalid_audio"],
      [encodeWav({ sampleRate: 16000, channels: 1, samples: new Int16Array(0) }), "audio/wav", 400, "invalid_audio"],
      [wav(1), "audio/mpeg", 415, "unsupported_media_type"],
      [Buffer.alloc(6 * 1024 * 1024), "audio/wav", 413, "payload_too_large"],
    ];
    for (const [body, type, status, code] of cases) {
      const res = await upload(body, "bad.wav", acct.key, type);
      expect([res.status, res.body.error.code], JSON.stringify(res.body)).toEqual([status, code]);
    }
    expect((await upload(wav(1), "")).status).toBe(400);
  });

  it("is the account's own: another account cannot read, delete or play it", async () => {
    const clip = (await upload(wav(1))).body;
    expect(errorOf(await app.request("GET", `/v1/test-audio/${clip.id}`, { key: other.key })).code).toBe("test_audio_not_found");
    expect(errorOf(await app.request("DELETE", `/v1/test-audio/${clip.id}`, { key: other.key })).code).toBe("test_audio_not_found");
    expect((await app.request("GET", "/v1/test-audio", { key: other.key })).body.data).toEqual([]);
    const otherAgent = (await app.request("POST", "/v1/agents", { key: other.key, body: { name: "Other", system_prompt: "x", voice_id: "flite-slt" } })).body.id;
    const res = await app.request("POST", `/v1/agents/${otherAgent}/test-runs`, { key: other.key, body: { scenarios: [{ name: "s", caller: { lines: ["hi", { audio_id: clip.id }] } }] } });
    expect(res.status).toBe(400);
    expect(errorOf(res).details.fields[0].field).toBe("scenarios[0].caller.lines[1].audio_id");
  });

  it("holds at most 100 clips per account, even uploaded all at once (409 test_audio_limit_reached); a deleted one makes room", async () => {
    const owner = await app.account();
    const clip = wav(0.1, 8000);
    const answers = await Promise.all(Array.from({ length: 104 }, (_, i) => upload(clip, `clip-${i}.wav`, owner.key)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(100);
    expect(answers.filter((a) => a.status !== 201).map((a) => [a.status, a.body.error.code])).toEqual(Array.from({ length: 4 }, () => [409, "test_audio_limit_reached"]));
    // Another account is not held back by this one's clips.
    expect((await upload(clip, "mine.wav", other.key)).status).toBe(201);
    const first = answers.find((a) => a.status === 201)!.body.id;
    expect((await app.request("DELETE", `/v1/test-audio/${first}`, { key: owner.key })).status).toBe(200);
    expect((await upload(clip, "again.wav", owner.key)).status).toBe(201);
    expect((await upload(clip, "one-too-many.wav", owner.key)).status).toBe(409);
  });

  it("is a scenario line: a run naming the account's clip starts with it; deleted, it names it no more", async () => {
    const clip = (await upload(wav(1), "question.wav")).body;
    const res = await app.request("POST", `/v1/agents/${agentId}/test-runs`, { key: acct.key, body: { scenarios: [{ name: "recorded", caller: { lines: [{ audio_id: clip.id }, "goodbye"] } }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(started.at(-1)!.scenarios[0]!.caller.lines).toEqual([{ audio_id: clip.id }, "goodbye"]);
    await app.parley.services.testRuns.finish(started.at(-1)!, []);
    expect((await app.request("DELETE", `/v1/test-audio/${clip.id}`, { key: acct.key })).body).toEqual({ id: clip.id, deleted: true });
    const again = await app.request("POST", `/v1/agents/${agentId}/test-runs`, { key: acct.key, body: { scenarios: [{ name: "recorded", caller: { lines: [{ audio_id: clip.id }] } }] } });
    expect(errorOf(again).details.fields[0].field).toBe("scenarios[0].caller.lines[0].audio_id");
    expect((await app.request("POST", `/v1/agents/${agentId}/test-runs`, { key: acct.key, body: { scenarios: [{ name: "bad", caller: { lines: [{ audio_id: clip.id, extra: 1 }] } }] } })).status).toBe(400);
  });
});
