import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { text } from "node:stream/consumers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalRecordingStore } from "../../../src/services/local-recording-store.js";
import { S3RecordingStore, type S3RecordingSettings } from "../../../src/services/s3-recording-store.js";
import { logLines } from "../../helpers/log-lines.js";
import { startS3StandIn, type S3StandIn } from "../../helpers/s3-standin.js";

let s3: S3StandIn;
let dir: string;
const { destination, lines: logs } = logLines();
const logger = pino({ level: "info" }, destination);

beforeAll(async () => {
  s3 = await startS3StandIn();
  dir = mkdtempSync(path.join(os.tmpdir(), "parley-s3-store-"));
});
afterAll(async () => {
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

function settings(overrides: Partial<S3RecordingSettings> = {}): S3RecordingSettings {
  return { bucket: s3.bucket, endpoint: s3.endpoint, region: s3.region, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, prefix: "recordings/", ...overrides };
}

/** A WAV-like file the engine would have written for `callId`. */
function written(callId: string, content = `RIFF${callId}WAVE`): string {
  const file = path.join(dir, `${callId}.wav`);
  writeFileSync(file, content);
  return file;
}

describe("S3RecordingStore", () => {
  it("uploads a recording under <prefix><call id>.wav, deletes the local file, and opens and removes it by its s3:// reference", async () => {
    const store = new S3RecordingStore(settings(), { logger, retryDelaysMs: [] });
    const file = written("call_one");
    const ref = await store.save("call_one", file);
    expect(ref).toBe(`s3://${s3.bucket}/recordings/call_one.wav`);
    expect(existsSync(file)).toBe(false);
    expect(s3.objects.get("recordings/call_one.wav")?.body.toString()).toBe("RIFFcall_oneWAVE");
    expect(s3.objects.get("recordings/call_one.wav")?.contentType).toBe("audio/wav");

    expect(await store.exists(ref)).toBe(true);
    const opened = await store.open(ref);
    expect(opened?.size).toBe("RIFFcall_oneWAVE".length);
    expect(opened && "body" in opened && (await text(opened.body))).toBe("RIFFcall_oneWAVE");

    await store.remove(ref);
    expect(s3.objects.has("recordings/call_one.wav")).toBe(false);
    expect(await store.exists(ref)).toBe(false);
    expect(await store.open(ref)).toBeNull();
    // Removing it again is no error.
    await store.remove(ref);
    await store.close();
  });

  it("keeps the file in the data directory, as its reference, when the secret is wrong: the stand-in refuses the signature, and the log has no secret", async () => {
    const wrongSecret = "not-the-secret-0000000000000000000000000";
    const store = new S3RecordingStore(settings({ secretAccessKey: wrongSecret }), { logger, retryDelaysMs: [1] });
    const file = written("call_refused");
    const before = s3.requests.length;
    expect(await store.save("call_refused", file)).toBe(file);
    expect(existsSync(file)).toBe(true);
    expect(s3.objects.has("recordings/call_refused.wav")).toBe(false);
    expect(s3.requests.slice(before).map((r) => r.status)).toEqual([403, 403]);
    const failure = logs.find((l) => l.call_id === "call_refused" && l.level === 50);
    expect(failure?.err.name).toBe("SignatureDoesNotMatch");
    expect(failure?.attempts).toBe(2);
    expect(JSON.stringify(logs)).not.toContain(wrongSecret);
    // Reads and deletions through a refused signature fail rather than answer "absent".
    await expect(store.open(`s3://${s3.bucket}/recordings/anything.wav`)).rejects.toMatchObject({ name: "SignatureDoesNotMatch" });
    await expect(store.remove(`s3://${s3.bucket}/recordings/anything.wav`)).rejects.toMatchObject({ name: "SignatureDoesNotMatch" });
    // The local file it kept is still served and deleted through the same store.
    expect(await store.open(file)).toEqual({ size: "RIFFcall_refusedWAVE".length, file });
    await store.remove(file);
    expect(existsSync(file)).toBe(false);
    await store.close();
  });

  it("retries an upload the service failed (500), then succeeds", async () => {
    const store = new S3RecordingStore(settings({ prefix: "calls/" }), { logger, retryDelaysMs: [1, 1, 1] });
    const file = written("call_retried");
    const before = s3.requests.length;
    s3.failNext(2);
    expect(await store.save("call_retried", file)).toBe(`s3://${s3.bucket}/calls/call_retried.wav`);
    expect(s3.requests.slice(before).map((r) => `${r.method} ${r.status}`)).toEqual(["PUT 500", "PUT 500", "PUT 200"]);
    expect(existsSync(file)).toBe(false);
    expect(logs.filter((l) => l.call_id === "call_retried" && l.retry_in_ms === 1)).toHaveLength(2);
    await store.close();
  });

  it("gives up after its retries, keeping the local file", async () => {
    const store = new S3RecordingStore(settings(), { logger, retryDelaysMs: [1] });
    const file = written("call_outage");
    s3.failNext(2);
    expect(await store.save("call_outage", file)).toBe(file);
    expect(readFileSync(file, "utf8")).toBe("RIFFcall_outageWAVE");
    await store.close();
  });
});

describe("LocalRecordingStore", () => {
  it("keeps the file where the engine wrote it, and refuses to claim a bucket's recording deleted", async () => {
    const store = new LocalRecordingStore();
    const file = written("call_local");
    expect(await store.save("call_local", file)).toBe(file);
    expect(await store.exists(file)).toBe(true);
    expect((await store.open(file))?.size).toBe("RIFFcall_localWAVE".length);
    expect(await store.open(file)).toMatchObject({ file });
    await store.remove(file);
    expect(await store.exists(file)).toBe(false);
    expect(await store.open(file)).toBeNull();
    await expect(store.remove("s3://bucket/recordings/call_x.wav")).rejects.toThrow(/PARLEY_RECORDINGS_S3_BUCKET/);
  });
});
