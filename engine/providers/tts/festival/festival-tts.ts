/*
 * Festival (the Festival Speech Synthesis System, University of Edinburgh, and the CMU voices)
 * runs as separate `festival` processes from the Debian packages; nothing of it is linked in.
 */
import type { AudioFrame } from "../../../audio/audio-frame.js";
import type { RetryPolicy } from "../../provider-retry.js";
import { speakSentences } from "../sentence-speech.js";
import type { SpeechChunk, TtsProvider } from "../tts-provider.js";
import type { VoiceInfo } from "../voice.js";
import { FestivalPool, type FestivalPoolStats } from "./festival-pool.js";
import { toFestivalString } from "./festival-text.js";
import { FESTIVAL_VOICES, voiceInfo } from "./festival-voices.js";

/** Festival renders a sentence whole; chunks let the consumer queue, play and cut it on a fine grid. */
const CHUNK_MS = 100;
const NO_RETRY: RetryPolicy = Object.freeze({ delaysMs: Object.freeze([]), maxRetryAfterMs: 0 });

export interface FestivalTtsConfig {
  /** Festival processes per voice, each saying one sentence at a time. Default 1. */
  processes?: number;
  /** The festival executable (tests point it elsewhere). Default `festival` on PATH. */
  command?: string;
  /** How long a sentence may take before its process is taken as hung and stopped. Default 20 s (tests shorten it). */
  answerTimeoutMs?: number;
}

/**
 * Festival's voices (the CMU slt HTS voice, clearer than Flite's, and the kal diphone voice)
 * from warm `festival --pipe` processes. Every input piece is one sentence; its audio is yielded
 * in piece order, in 100 ms chunks at the rate Festival's RIFF header gives, while the next
 * piece is already being synthesized.
 */
export class FestivalTts implements TtsProvider {
  readonly name = "festival";
  private readonly pool: FestivalPool;
  private readonly voiceList: readonly VoiceInfo[] = FESTIVAL_VOICES.map(voiceInfo);

  constructor(config: FestivalTtsConfig = {}) {
    const processes = config.processes ?? 1;
    if (!Number.isInteger(processes) || processes < 1) throw new Error(`FestivalTts needs a whole number of processes, at least 1, not ${processes}`);
    this.pool = new FestivalPool(processes, config.command, config.answerTimeoutMs);
  }

  voices(): readonly VoiceInfo[] {
    return this.voiceList;
  }

  /** Loads `voiceId` in a process now, so its first sentence does not wait for it. Rejects with FestivalError. */
  warmUp(voiceId: string): Promise<void> {
    return this.pool.warmUp(festivalVoice(voiceId));
  }

  async *synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    const voice = festivalVoice(options.voiceId);
    const pool = this.pool;
    yield* speakSentences(text, {
      signal: options.signal,
      // A process that died is replaced for the next sentence, not this one: the call session's fallback says this one.
      retry: NO_RETRY,
      async *speak(sentence, signal) {
        const literal = toFestivalString(sentence);
        if (literal) yield* chunks(await pool.say(voice, literal, signal));
      },
    });
  }

  stats(): FestivalPoolStats {
    return this.pool.stats();
  }

  /** Process ids of the running festival processes, of one voice or all. */
  pids(voiceId?: string): number[] {
    return this.pool.pids(voiceId === undefined ? undefined : festivalVoice(voiceId));
  }

  /** Ends the processes; synthesis still running fails. */
  async close(): Promise<void> {
    this.pool.close();
  }
}

function festivalVoice(voiceId: string) {
  const voice = FESTIVAL_VOICES.find((v) => v.id === voiceId);
  if (!voice) throw new Error(`unknown Festival voice "${voiceId}"; Festival voices: ${FESTIVAL_VOICES.map((v) => v.id).join(", ")}`);
  return voice;
}

function* chunks(audio: AudioFrame): Iterable<AudioFrame> {
  const size = (audio.sampleRate * CHUNK_MS) / 1000;
  for (let at = 0; at < audio.samples.length; at += size) {
    yield { samples: audio.samples.subarray(at, at + size), sampleRate: audio.sampleRate };
  }
}
