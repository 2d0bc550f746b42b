import os from "node:os";
import type { AsrProvider, AsrSession } from "../asr-provider.js";
import { AsrError } from "../asr-error.js";
import { answerGrammar } from "./answer-grammar.js";
import { dictionaryWords } from "./dictionary-words.js";
import { PocketsphinxSession } from "./pocketsphinx-session.js";
import { RecognizerPool, type RecognizerPoolStats } from "./recognizer-pool.js";
import { defaultRecognizerPath } from "./recognizer-process.js";

/** Languages the bundled model reads. */
export const POCKETSPHINX_LANGUAGES = ["en-US"] as const;

/**
 * Recognizers per core by default. Decoding costs 0.26 s of CPU per second of 16 kHz speech
 * and 0.37 s for upsampled 8 kHz telephony (measured); recognizers are leased only while a
 * caller speaks, so three per core keep every core decoding when many callers talk at once.
 */
const RECOGNIZERS_PER_CORE = 3;
/** What one recognizer process holds (its two decoders, measured 122 MB): the memory bound of the default. */
export const RECOGNIZER_BYTES = 125 * 1024 * 1024;
/** At most this share of the machine's memory goes to recognizers by default. */
const RECOGNIZER_MEMORY_SHARE = 0.25;

/** The default pool size for a machine: three per core, within a quarter of its memory, at least one. */
export function defaultRecognizerCount(machine: { cores: number; memoryBytes: number } = { cores: os.availableParallelism(), memoryBytes: os.totalmem() }): number {
  const byMemory = Math.floor((machine.memoryBytes * RECOGNIZER_MEMORY_SHARE) / RECOGNIZER_BYTES);
  return Math.max(1, Math.min(RECOGNIZERS_PER_CORE * machine.cores, byMemory));
}

export interface PocketsphinxConfig {
  /** Recognizer processes at most, ~125 MB each (see `defaultRecognizerCount`). */
  maxRecognizers?: number;
  /** How long a caller's speech may wait for a busy pool before the utterance fails (`capacity_exhausted`). */
  maxWaitMs?: number;
  /** The built recognizer; default `dist/native/pocketsphinx-recognizer` in the package. */
  binaryPath?: string;
  /** The US-English model folder of Debian's pocketsphinx-en-us. */
  modelDir?: string;
}

/** Debian's US-English model (the pocketsphinx-en-us package). */
export const DEFAULT_MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";

/**
 * The embedded speech recognizer: pocketsphinx with the US-English model, in pooled child
 * processes (decoding is synchronous native work; it must not run on the event loop). A call
 * leases a recognizer while its caller speaks (see PocketsphinxSession); the model loads once
 * per process, and a process serves speech after speech. Takes 8 kHz (upsampled by
 * `AsrUpsampler`) and 16 kHz audio. Listens for what the agent expects (ExpectedSpeech) with a
 * grammar in the dictionary's words (answer-grammar.ts).
 */
export class PocketsphinxProvider implements AsrProvider {
  readonly name = "pocketsphinx";
  readonly languages = POCKETSPHINX_LANGUAGES;
  readonly recognizers: number;
  private readonly pool: RecognizerPool;
  private readonly modelDir: string;

  constructor(config: PocketsphinxConfig = {}) {
    this.recognizers = config.maxRecognizers ?? defaultRecognizerCount();
    this.modelDir = config.modelDir ?? DEFAULT_MODEL_DIR;
    this.pool = new RecognizerPool({
      maxRecognizers: this.recognizers,
      maxWaitMs: config.maxWaitMs,
      process: {
        binaryPath: config.binaryPath ?? defaultRecognizerPath(),
        modelDir: this.modelDir,
      },
    });
  }

  /** A call's recognition; fails when the recognizer cannot run at all (so the call does not start deaf). */
  async open(options: { language: string; signal: AbortSignal }): Promise<AsrSession> {
    if (!POCKETSPHINX_LANGUAGES.some((language) => language.toLowerCase() === options.language.toLowerCase())) {
      throw new AsrError(
        "unsupported_language",
        `the pocketsphinx recognizer reads ${POCKETSPHINX_LANGUAGES.join(", ")}, not ${options.language}`,
        { retryable: false },
      );
    }
    await this.pool.ensureLoaded(options.signal);
    const words = await dictionaryWords(this.modelDir);
    return new PocketsphinxSession(this.pool, (expected) => answerGrammar(expected, (word) => words.has(word)));
  }

  /** Loads `count` recognizers now (within the maximum), so the first callers do not wait for the model. */
  warmUp(count: number = this.recognizers): Promise<void> {
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
