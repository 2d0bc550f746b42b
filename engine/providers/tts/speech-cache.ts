import type { AudioFrame } from "../../audio/audio-frame.js";
import { abortable } from "../../stream/abortable.js";
import { streamOf } from "../../stream/stream-of.js";
import type { SpeechChunk, TtsProvider } from "./tts-provider.js";
import type { VoiceInfo } from "./voice.js";

/** Default bound of the audio kept: about nine minutes of 16 kHz speech. */
export const SPEECH_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * Speech rendered once and said again without the TTS: greetings, which every call of an agent
 * starts with and which the caller should hear at once. Keyed by voice and sentence; the least
 * recently used sentences go first past `maxBytes`. As a TtsProvider it says each piece from
 * the cache when it has it, else renders it (keeping it for next time): the first piece's audio
 * goes out while the next ones are rendered.
 */
export class SpeechCache implements TtsProvider {
  readonly name: string;
  private readonly kept = new Map<string, { audio: AudioFrame[]; bytes: number }>();
  /** Sentences being rendered now: a call that needs one meanwhile waits for it rather than rendering it twice. */
  private readonly rendering = new Map<string, Promise<AudioFrame[] | undefined>>();
  private bytes = 0;

  constructor(
    private readonly tts: TtsProvider,
    private readonly maxBytes = SPEECH_CACHE_BYTES,
  ) {
    this.name = `cached ${tts.name}`;
  }

  voices(): readonly VoiceInfo[] {
    return this.tts.voices();
  }

  /** Bytes of audio kept now. */
  get size(): number {
    return this.bytes;
  }

  /** Whether `text` in `voiceId` is kept. */
  has(voiceId: string, text: string): boolean {
    return this.kept.has(key(voiceId, text));
  }

  async *synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    let index = 0;
    for await (const piece of text) {
      const pieceIndex = index++;
      if (options.signal.aborted) return;
      const k = key(options.voiceId, piece);
      const pending = this.rendering.get(k);
      // Another call's rendering of it is waited for only as long as this call lasts.
      const kept = this.take(k) ?? (pending && (await abortable(pending, options.signal).catch(() => undefined)));
      if (options.signal.aborted) return;
      if (kept) {
        for (const chunk of kept) yield { ...chunk, piece: pieceIndex };
        continue;
      }
      const audio: AudioFrame[] = [];
      let done!: (audio: AudioFrame[] | undefined) => void;
      // Set before anything is awaited: a call asking for the sentence meanwhile waits for this rendering.
      this.rendering.set(k, new Promise((resolve) => (done = resolve)));
      try {
        for await (const { piece: _, ...chunk } of this.tts.synthesize(streamOf(piece), options)) {
          audio.push(chunk);
          yield { ...chunk, piece: pieceIndex };
        }
        if (!options.signal.aborted) this.keep(k, audio);
      } finally {
        this.rendering.delete(k);
        done(options.signal.aborted ? undefined : audio);
      }
    }
  }

  /** Renders `sentences` in `voiceId` ahead of a call (those not kept already); resolves once they are kept. */
  async prepare(voiceId: string, sentences: readonly string[], signal: AbortSignal): Promise<void> {
    const missing = sentences.filter((s) => !this.has(voiceId, s));
    if (missing.length === 0) return;
    for await (const _ of this.synthesize(streamOf(...missing), { voiceId, signal })) {
      // Kept as a side effect.
    }
  }

  /** The kept audio of `k`, now the most recently used. */
  private take(k: string): AudioFrame[] | undefined {
    const entry = this.kept.get(k);
    if (!entry) return undefined;
    this.kept.delete(k);
    this.kept.set(k, entry);
    return entry.audio;
  }

  private keep(k: string, audio: AudioFrame[]): void {
    const bytes = audio.reduce((n, chunk) => n + chunk.samples.byteLength, 0);
    if (bytes === 0 || bytes > this.maxBytes) return;
    const old = this.kept.get(k);
    if (old) this.bytes -= old.bytes;
    this.kept.delete(k);
    this.kept.set(k, { audio, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }
}

function key(voiceId: string, text: string): string {
  return `${voiceId}\u0000${text}`;
}

