import { createHmac, timingSafeEqual } from "node:crypto";
import { ApiError } from "../core/api-error.js";
import { CallsRepository } from "../db/repositories/calls.js";
import type { Db } from "../db/database.js";
import { LocalRecordingStore } from "./local-recording-store.js";
import type { OpenedRecording, RecordingStore } from "./recording-store.js";

/** How long a recording link works: long enough for webhook receivers that retry for days. */
export const RECORDING_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Signed, expiring links to call recordings: `{baseUrl}/v1/calls/{id}/recording?expires=...&signature=...`.
 * The owning account gets one from `GET /v1/calls/{id}?include=recording` with its API key;
 * whoever holds the link (a webhook receiver, a browser) can fetch the WAV until it expires,
 * without a key. The signature is an HMAC of the call id and the expiry under a key derived
 * from the service's secret (PARLEY_SECRET, or the data directory's), so links survive
 * restarts, work on every node sharing that secret, and cannot be forged or extended.
 */
export class RecordingLinks {
  private readonly key: Buffer;
  private readonly calls: CallsRepository;

  constructor(
    db: Db,
    dataSecret: Buffer,
    private readonly baseUrl: string,
    private readonly now: () => number = Date.now,
    /** Where the recordings are (the composition root's choice; the data directory for links that are only signed). */
    private readonly store: RecordingStore = new LocalRecordingStore(),
  ) {
    this.key = createHmac("sha256", dataSecret).update("recording-links").digest();
    this.calls = new CallsRepository(db);
  }

  /** A link to the call's recording, or null when it has none. */
  url(call: { id: string; recording_path: string | null }): string | null {
    if (!call.recording_path) return null;
    const expires = Math.floor((this.now() + RECORDING_LINK_TTL_MS) / 1000);
    return `${this.baseUrl}/v1/calls/${encodeURIComponent(call.id)}/recording?expires=${expires}&signature=${this.sign(call.id, expires)}`;
  }

  /** The recording a link points to, opened; throws the API error a bad, expired or dangling link deserves. */
  async resolve(callId: string, expires: string | undefined, signature: string | undefined): Promise<OpenedRecording> {
    if (!expires || !signature || !/^\d{1,12}$/.test(expires)) {
      throw new ApiError(403, "invalid_signature", "A recording link needs its expires and signature parameters");
    }
    const expected = Buffer.from(this.sign(callId, Number(expires)));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ApiError(403, "invalid_signature", "This recording link is not valid");
    }
    if (Number(expires) * 1000 < this.now()) throw new ApiError(403, "link_expired", "This recording link has expired; read the call again for a new one");
    const call = await this.calls.findById(callId);
    const recording = call?.recording_path ? await this.store.open(call.recording_path) : null;
    if (!recording) throw new ApiError(404, "recording_not_found", "This call has no recording");
    return recording;
  }

  private sign(callId: string, expires: number): string {
    return createHmac("sha256", this.key).update(`${callId}\n${expires}`).digest("base64url");
  }
}
