import { bytesToPcm16, monoAt, parseWav, pcm16ToBytes } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import type { Db } from "../db/database.js";
import { TestAudioRepository, type TestAudioSummary } from "../db/repositories/test-audio.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";

/** Limits of test audio, whatever the plan. */
export const TEST_AUDIO_LIMITS = {
  /** An upload's size (a minute of 16 kHz stereo PCM16 is 3.8 MB). */
  uploadBytes: 5 * 1024 * 1024,
  /** A clip's length once decoded. */
  maxSeconds: 60,
  clipsPerAccount: 100,
} as const;

/** Test runs' callers speak at the phone line's rate. */
export const TEST_AUDIO_RATE = 8000;

/**
 * Recordings an account uploads for its test runs' callers (a scenario line `{audio_id}`):
 * WAV files (PCM16, any rate from 8 to 48 kHz, mono or stereo) kept as 8 kHz mono PCM16, the
 * rate the runs' phone line carries. Every read and write is scoped to the account.
 */
export class TestAudioService {
  private readonly repo: TestAudioRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { cursors: CursorCodec },
  ) {
    this.repo = new TestAudioRepository(db);
  }

  /** Stores an uploaded WAV; 400 `invalid_audio` naming what is wrong, 409 `test_audio_limit_reached` past the account's 100. */
  async upload(accountId: string, name: string, bytes: Buffer): Promise<TestAudioSummary> {
    const samples = phoneRate(bytes);
    const row = { id: newId("testAudio"), account_id: accountId, name, duration_ms: Math.round((samples.length / TEST_AUDIO_RATE) * 1000), samples: Buffer.from(pcm16ToBytes(samples)), created_at: nowIso() };
    await this.db.transaction().execute(async (trx) => {
      await holdAccountLock(trx, accountId);
      if ((await this.repo.count(accountId, trx)) >= TEST_AUDIO_LIMITS.clipsPerAccount) {
        throw new ApiError(409, "test_audio_limit_reached", `An account holds at most ${TEST_AUDIO_LIMITS.clipsPerAccount} test audio clips; delete one first`);
      }
      await this.repo.insert(row, trx);
    });
    const { samples: _samples, account_id: _account, ...summary } = row;
    return summary;
  }

  list(accountId: string, query: ListQuery) {
    return listPage({ codec: this.deps.cursors, list: "test_audio", filters: {}, query, fetch: (page) => this.repo.page(accountId, page), count: () => this.repo.count(accountId), present: (row: TestAudioSummary) => row });
  }

  async get(accountId: string, id: string): Promise<TestAudioSummary> {
    const row = await this.repo.find(accountId, id);
    if (!row) throw notFound(id);
    return row;
  }

  async delete(accountId: string, id: string): Promise<void> {
    if (!(await this.repo.delete(accountId, id))) throw notFound(id);
  }

  /** Which of `ids` are not the account's clips. */
  async missing(accountId: string, ids: readonly string[]): Promise<string[]> {
    const owned = new Set(await this.repo.ownedIds(accountId, ids));
    return ids.filter((id) => !owned.has(id));
  }

  /** A clip's audio, 8 kHz PCM16; 404 when it was deleted. */
  async samples(accountId: string, id: string): Promise<Int16Array> {
    const bytes = await this.repo.samples(accountId, id);
    if (!bytes) throw notFound(id);
    return bytesToPcm16(bytes);
  }
}

function notFound(id: string): ApiError {
  return new ApiError(404, "test_audio_not_found", `No test audio ${id} in this account`);
}

/** The WAV's audio as 8 kHz mono; 400 `invalid_audio` saying why it cannot be used. */
function phoneRate(bytes: Buffer): Int16Array {
  let wav: ReturnType<typeof parseWav>;
  try {
    wav = parseWav(bytes);
  } catch (err) {
    throw new ApiError(400, "invalid_audio", `not a WAV file Parley can read: ${(err as Error).message}`);
  }
  if (wav.sampleRate < 8000 || wav.sampleRate > 48000) throw new ApiError(400, "invalid_audio", `the WAV's rate must be 8000 to 48000 Hz, not ${wav.sampleRate}`);
  if (wav.channels !== 1 && wav.channels !== 2) throw new ApiError(400, "invalid_audio", `the WAV must be mono or stereo, not ${wav.channels} channels`);
  const frames = wav.samples.length / wav.channels;
  if (frames === 0) throw new ApiError(400, "invalid_audio", "the WAV holds no audio");
  if (frames / wav.sampleRate > TEST_AUDIO_LIMITS.maxSeconds) throw new ApiError(400, "invalid_audio", `a clip lasts at most ${TEST_AUDIO_LIMITS.maxSeconds} s, this one ${Math.round(frames / wav.sampleRate)} s`);
  return monoAt(wav, TEST_AUDIO_RATE);
}
