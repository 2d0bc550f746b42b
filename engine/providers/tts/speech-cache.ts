import type { AudioFrame } from "../../audio/audio-frame.js";
import { streamOf } from "../../stream/stream-of.js";
import { SharedRendering } from "./shared-rendering.js";
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
 *
 * A rendering runs at the TTS's pace, not at its listeners': calls asking for a sentence being
 * rendered get each chunk as it comes, so one call's playout never holds back another's
 * greeting. It stops when every call listening to it has gone.
 */
export class SpeechCache implements TtsProvider {
  readonly name: string;
  private readonly kept = new Map<string, { audio: AudioFrame[]; bytes: number }>();
  /** Sentences being rendered now: a call that needs one meanwhile listens to this rendering rather than starting another. */
  private readonly rendering = new Map<string, SharedRendering>();
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
      const kept = this.take(k);
      const audio = kept ? kept.values() : this.renderingOf(k, options.voiceId, piece).listen(options.signal);
      // Object.assign: `{ ...chunk, piece }` gives each chunk a hidden class of its own on Node 20.
      for await (const chunk of audio) yield Object.assign({}, chunk, { piece: pieceIndex });
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

  /** The rendering of `k` under way, or a new one, kept once it completes. */
  private renderingOf(k: string, voiceId: string, piece: string): SharedRendering {
    const current = this.rendering.get(k);
    if (current) return current;
    const rendering = new SharedRendering(this.tts, voiceId, piece, (audio) => {
      this.rendering.delete(k);
      if (audio) this.keep(k, audio);
    });
    this.rendering.set(k, rendering);
    return rendering;
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

