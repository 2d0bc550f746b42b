import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../engine/audio/wav.js";
import { recordingFile, recordingsDir } from "../../src/services/recording-files.js";
import { logLines } from "../helpers/log-lines.js";
import { startS3StandIn, type S3StandIn } from "../helpers/s3-standin.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { CallsRepository } from "../../src/db/repositories/calls.js";

/**
 * Recordings in an S3-compatible bucket (PARLEY_RECORDINGS_S3_*), against a stand-in that
 * checks every request's SigV4 signature: a recorded call's WAV is uploaded when it ends and
 * the local file deleted; its link streams the object; DELETE of the call's content and the
 * retention pass delete the object.
 */

const DAY_MS = 86_400_000;

let s3: S3StandIn;
let app: TestApp;
let owner: TestAccount;
let agentId: string;
const { destination, lines: logs } = logLines();

beforeAll(async () => {
  s3 = await startS3StandIn({ bucket: "parley-calls" });
  app = await startTestApp(
    {},
    {
      PARLEY_RECORDINGS_S3_BUCKET: s3.bucket,
      PARLEY_RECORDINGS_S3_ENDPOINT: s3.endpoint,
      PARLEY_RECORDINGS_S3_ACCESS_KEY_ID: s3.accessKeyId,
      PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      PARLEY_RECORDINGS_S3_PREFIX: "tenant-a/recordings/",
      PARLEY_RETENTION_DAYS: "30",
    },
    pino({ level: "info" }, destination),
  );
  owner = await app.account();
  agentId = (await app.request("POST", "/v1/agents", { key: owner.key, body: { name: "Rec", system_prompt: "You answer.", voice_id: "flite-slt" } })).body.id;
});

afterAll(async () => {
  await app?.close();
  await s3?.close();
});

/** Distinct audio per call, so a mix-up of objects shows. */
function wavFor(seed: number): Buffer {
  return encodeWav({ samples: Int16Array.from({ length: 1600 }, (_, i) => Math.round(3000 * Math.sin((i + seed) / 5))), sampleRate: 8000, channels: 1 });
}

/**
 * A recorded call run as the media gateway runs one: begun live, its WAV written where the
 * engine writes it (recordingFile), and ended with that path. Returns the call id and the WAV.
 */
async function recordedCall(seed: number): Promise<{ id: string; wav: Buffer; file: string }> {
  const { services } = app.parley;
  const account = (await services.accounts.find(owner.id))!;
  const agent = await services.agents.get(owner.id, agentId);
  const call = await services.liveCalls.begin({ account, agent, direction: "web", phoneNumber: null, fromNumber: null, record: true, maxDuration: 600, metadata: {}, context: {} });
  const wav = wavFor(seed);
  const file = recordingFile(app.dataDir, call.id);
  mkdirSync(recordingsDir(app.dataDir), { recursive: true });
  writeFileSync(file, wav);
  await services.liveCalls.end(call.id, { status: "completed", durationMs: 12_000, transcript: [], recordingPath: file, endReason: "caller_hangup" });
  return { id: call.id, wav, file };
}

async function storedPath(id: string): Promise<string | null> {
  return (await app.parley.services.db.selectFrom("calls").select("recording_path").where("id", "=", id).executeTakeFirstOrThrow()).recording_path;
}

async function fetchRecording(id: string): Promise<Response> {
  const read = await app.request("GET", `/v1/calls/${id}?include=recording`, { key: owner.key });
  expect(read.status).toBe(200);
  const url = new URL(read.body.recording_url);
  return fetch(`${app.baseUrl}${url.pathname}${url.search}`);
}

describe("recordings in an S3-compatible bucket", () => {
  it("upload a finished call's WAV under <prefix><call id>.wav, delete the local file, and stream the same bytes through the signed link", async () => {
    const { id, wav, file } = await recordedCall(1);
    const key = `tenant-a/recordings/${id}.wav`;
    expect(s3.objects.get(key)?.body.equals(wav)).toBe(true);
    expect(existsSync(file)).toBe(false);
    expect(await storedPath(id)).toBe(`s3://parley-calls/${key}`);

    const fetched = await fetchRecording(id);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get("content-type")).toBe("audio/wav");
    expect(fetched.headers.get("content-length")).toBe(String(wav.length));
    expect(Buffer.from(await fetched.arrayBuffer()).equals(wav)).toBe(true);
    expect(s3.requests.filter((r) => r.key === key).map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 200", "GET 200"]);
  });

  it("DELETE of the call's content deletes the object; the link then answers 404", async () => {
    const { id } = await recordedCall(2);
    const key = `tenant-a/recordings/${id}.wav`;
    const link = (await app.request("GET", `/v1/calls/${id}?include=recording`, { key: owner.key })).body.recording_url as string;
    const deleted = await app.request("DELETE", `/v1/calls/${id}`, { key: owner.key });
    expect(deleted.status).toBe(200);
    expect(s3.objects.has(key)).toBe(false);
    expect(s3.requests.some((r) => r.method === "DELETE" && r.key === key)).toBe(true);
    expect(await storedPath(id)).toBeNull();
    const url = new URL(link);
    const res = await fetch(`${app.baseUrl}${url.pathname}${url.search}`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("recording_not_found");
  });

  it("the retention pass deletes the object of a call past its retention, and keeps a recent one's", async () => {
    const old = await recordedCall(3);
    const recent = await recordedCall(4);
    const endedAt = new Date(Date.now() - 60 * DAY_MS).toISOString();
    await app.parley.services.db.updateTable("calls").set({ ended_at: endedAt, created_at: endedAt, answered_at: endedAt }).where("id", "=", old.id).execute();
    await app.parley.services.retention.run();
    expect(s3.objects.has(`tenant-a/recordings/${old.id}.wav`)).toBe(false);
    expect(await storedPath(old.id)).toBeNull();
    expect(s3.objects.get(`tenant-a/recordings/${recent.id}.wav`)?.body.equals(recent.wav)).toBe(true);
  });

  it("retry an upload the bucket failed once (500)", async () => {
    s3.failNext(1);
    const { id, wav, file } = await recordedCall(5);
    const key = `tenant-a/recordings/${id}.wav`;
    expect(s3.requests.filter((r) => r.key === key).map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 500", "PUT 200"]);
    expect(s3.objects.get(key)?.body.equals(wav)).toBe(true);
    expect(existsSync(file)).toBe(false);
  });

  it("upload the recording of a call a crash interrupted when the start-up recovery closes it", async () => {
    const { services } = app.parley;
    const account = (await services.accounts.find(owner.id))!;
    const agent = await services.agents.get(owner.id, agentId);
    const call = await services.liveCalls.begin({ account, agent, direction: "web", phoneNumber: null, fromNumber: null, record: true, maxDuration: 600, metadata: {}, context: {} });
    const wav = wavFor(6);
    writeFileSync(recordingFile(app.dataDir, call.id), wav);
    expect(await services.liveCalls.recoverInterrupted([(await new CallsRepository(services.db).findById(call.id))!])).toBe(1);
    expect(await storedPath(call.id)).toBe(`s3://parley-calls/tenant-a/recordings/${call.id}.wav`);
    expect(s3.objects.get(`tenant-a/recordings/${call.id}.wav`)?.body.equals(wav)).toBe(true);
    expect(existsSync(recordingFile(app.dataDir, call.id))).toBe(false);
  });

  it("never log the secret access key", () => {
    expect(logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs)).not.toContain(s3.secretAccessKey);
  });
});
