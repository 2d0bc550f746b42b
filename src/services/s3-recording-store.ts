import { readFile, rm } from "node:fs/promises";
import type { Readable } from "node:stream";
import type { S3Client } from "@aws-sdk/client-s3";
import type { Logger } from "pino";
import { LocalRecordingStore } from "./local-recording-store.js";
import type { OpenedRecording, RecordingStore } from "./recording-store.js";
import { parseS3Ref, S3_REF_PREFIX } from "./recording-store.js";
import type { Config } from "../config.js";

/** The bucket settings (PARLEY_RECORDINGS_S3_*). */
export type S3RecordingSettings = Config["recordings"]["s3"];

/** Waits before each further upload attempt: a short outage costs a few seconds at the call's end, not its recording. */
export const UPLOAD_RETRY_DELAYS_MS: readonly number[] = [500, 2_000, 8_000];

/**
 * Recordings in an S3-compatible bucket. When a call ends its WAV is uploaded (PutObject,
 * key `<prefix><call id>.wav`) and the local file deleted; the reference is
 * `s3://<bucket>/<key>`. An upload that still fails after the retries leaves the file in the
 * data directory with its path as the reference, so references of both kinds are served and
 * deleted here (local paths through LocalRecordingStore).
 */
export class S3RecordingStore implements RecordingStore {
  private client: Promise<{ s3: S3Client; sdk: typeof import("@aws-sdk/client-s3") }> | undefined;
  private readonly local = new LocalRecordingStore();
  private readonly retryDelaysMs: readonly number[];

  constructor(
    private readonly settings: S3RecordingSettings,
    private readonly deps: { logger: Logger; retryDelaysMs?: readonly number[] },
  ) {
    this.retryDelaysMs = deps.retryDelaysMs ?? UPLOAD_RETRY_DELAYS_MS;
  }

  /** The SDK is loaded with the first request (not at every start-up and CLI command: it takes ~0.2 s). */
  private connect(): Promise<{ s3: S3Client; sdk: typeof import("@aws-sdk/client-s3") }> {
    const settings = this.settings;
    return (this.client ??= import("@aws-sdk/client-s3").then((sdk) => ({
      sdk,
      s3: new sdk.S3Client({
        region: settings.region,
        ...(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {}),
        ...(settings.accessKeyId ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } } : {}),
        // Uploads are retried by save (with its log lines); a read or a deletion that fails is
        // answered as failed, and its client (a link, DELETE, the retention pass) tries again.
        maxAttempts: 1,
        // Checksums only where S3 requires them: several S3-compatible services refuse the
        // newer flexible-checksum headers.
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
        // A bucket that stops answering must not hold a call's end (and its slot) for ever.
        requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
      }),
    })));
  }

  async save(callId: string, localFile: string): Promise<string> {
    const key = `${this.settings.prefix}${callId}.wav`;
    const where = { call_id: callId, bucket: this.settings.bucket, key };
    let body: Buffer;
    try {
      body = await readFile(localFile);
    } catch (err) {
      // Uploaded already, by an attempt to store the call's end that failed after it (and is retried).
      const ref = `${S3_REF_PREFIX}${this.settings.bucket}/${key}`;
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && (await this.exists(ref).catch(() => false))) return ref;
      this.deps.logger.warn({ ...where, err: describe(err) }, "recording file not readable: not uploaded");
      return localFile;
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const { s3, sdk } = await this.connect();
        await s3.send(new sdk.PutObjectCommand({ Bucket: this.settings.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: "audio/wav" }));
        break;
      } catch (err) {
        const delay = this.retryDelaysMs[attempt];
        if (delay === undefined) {
          this.deps.logger.error({ ...where, attempts: attempt + 1, err: describe(err) }, "recording not uploaded to the bucket: it stays in the data directory");
          return localFile;
        }
        this.deps.logger.warn({ ...where, retry_in_ms: delay, err: describe(err) }, "recording upload failed; trying again");
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    await rm(localFile, { force: true }).catch((err: unknown) => this.deps.logger.warn({ ...where, err: describe(err) }, "uploaded recording's local file not deleted"));
    return `${S3_REF_PREFIX}${this.settings.bucket}/${key}`;
  }

  async open(ref: string): Promise<OpenedRecording | null> {
    const object = parseS3Ref(ref);
    if (!object) return this.local.open(ref);
    try {
      const { s3, sdk } = await this.connect();
      const got = await s3.send(new sdk.GetObjectCommand({ Bucket: object.bucket, Key: object.key }));
      return { size: got.ContentLength ?? 0, body: got.Body as Readable };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async remove(ref: string): Promise<void> {
    const object = parseS3Ref(ref);
    if (!object) return this.local.remove(ref);
    // DeleteObject succeeds for a key that is already gone.
    const { s3, sdk } = await this.connect();
    await s3.send(new sdk.DeleteObjectCommand({ Bucket: object.bucket, Key: object.key }));
  }

  async exists(ref: string): Promise<boolean> {
    const object = parseS3Ref(ref);
    if (!object) return this.local.exists(ref);
    try {
      const { s3, sdk } = await this.connect();
      await s3.send(new sdk.HeadObjectCommand({ Bucket: object.bucket, Key: object.key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Closes the client's connections. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) (await client).s3.destroy();
  }
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

/** What of an SDK error goes in a log line: its name, message and HTTP status (not the request, nor its signature). */
function describe(err: unknown): { name: string; message: string; status?: number } {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  return { name: e?.name ?? "Error", message: e?.message ?? String(err), ...(e?.$metadata?.httpStatusCode ? { status: e.$metadata.httpStatusCode } : {}) };
}
