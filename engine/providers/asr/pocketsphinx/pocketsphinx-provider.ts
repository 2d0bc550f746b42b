import os from "node:os";
import type { AsrProvider, AsrSession } from "../asr-provider.js";
import { AsrError } from "../asr-error.js";
import { PocketsphinxSession } from "./pocketsphinx-session.js";
import { RecognizerPool, type RecognizerPoolStats } from "./recognizer-pool.js";
import { defaultRecognizerPath } from "./recognizer-process.js";

/** Languages the bundled model reads. */
export const POCKETSPHINX_LANGUAGES = ["en-US"] as const;

/**
 * Recognizers per core by default. Decoding costs 0.26 s of CPU per second of 16 kHz speech
 * and 0.37 s for upsampled 8 kHz telephony (measured): two calls per core keep up in real time
 * even when both callers speak at once, and leave CPU for VAD, TTS and the event loop.
 * Callers speak about half the time, so a machine with little else to do can take more.
 */
const RECOGNIZERS_PER_CORE = 2;

export interface PocketsphinxConfig {
  /**
   * Most calls recognized at once: one recognizer process each, ~100 MB. Default: 2 per core.
   * Past it, `open()` fails at once with `capacity_exhausted` (retryable).
   */
  maxRecognizers?: number;
  /** The built recognizer; default `dist/native/pocketsphinx-recognizer` in the package. */
  binaryPath?: string;
  /** The US-English model folder of Debian's pocketsphinx-en-us. */
  modelDir?: string;
}

/**
 * The embedded speech recognizer: pocketsphinx with the US-English model, in pooled child
 * processes (decoding is synchronous native work; it must not run on the event loop). Each
 * call gets its own recognizer for its whole duration; the model loads once per process, and
 * a process serves call after call. Takes 8 kHz (upsampled by `AsrUpsampler`) and 16 kHz audio.
 */
export class PocketsphinxProvider implements AsrProvider {
  readonly name = "pocketsphinx";
  readonly languages = POCKETSPHINX_LANGUAGES;
  readonly maxSessions: number;
  private readonly pool: RecognizerPool;

  constructor(config: PocketsphinxConfig = {}) {
    this.maxSessions = config.maxRecognizers ?? RECOGNIZERS_PER_CORE * os.availableParallelism();
    this.pool = new RecognizerPool({
      maxRecognizers: this.maxSessions,
      process: {
        binaryPath: config.binaryPath ?? defaultRecognizerPath(),
        modelDir: config.modelDir ?? "/usr/share/pocketsphinx/model/en-us",
      },
    });
  }

  async open(options: { language: string; signal: AbortSignal }): Promise<AsrSession> {
    if (!POCKETSPHINX_LANGUAGES.some((language) => language.toLowerCase() === options.language.toLowerCase())) {
      throw new AsrError(
        "unsupported_language",
        `the pocketsphinx recognizer reads ${POCKETSPHINX_LANGUAGES.join(", ")}, not ${options.language}`,
        { retryable: false },
      );
    }
    return new PocketsphinxSession(this.pool, await this.pool.acquire(options.signal));
  }

  /** Loads `count` recognizers now (within the maximum), so the first calls do not wait for the model. */
  warmUp(count: number): Promise<void> {
    return this.pool.warmUp(count);
  }

  stats(): RecognizerPoolStats {
    return this.pool.stats();
  }

  /** Stops every recognizer process. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
