import type { AudioFrame } from "../../audio/audio-frame.js";
import { abortable } from "../../stream/abortable.js";
import { streamOf } from "../../stream/stream-of.js";
import type { TtsProvider } from "./tts-provider.js";

/**
 * One sentence being rendered for any number of listeners. The TTS is read as fast as it
 * renders, whatever the listeners' pace, and each listener gets every chunk from the first, as
 * soon as it exists. The rendering is aborted when its last listener goes before it ends.
 */
export class SharedRendering {
  private readonly chunks: AudioFrame[] = [];
  private readonly abort = new AbortController();
  private ended = false;
  private failure: { error: unknown } | undefined;
  private listeners = 0;
  private settled = false;
  private wakeUp!: () => void;
  private changed = this.nextChange();

  /** `onSettled` is told once: the whole audio when the rendering completed, else undefined (failed or abandoned). */
  constructor(
    tts: TtsProvider,
    voiceId: string,
    text: string,
    private readonly onSettled: (audio: AudioFrame[] | undefined) => void,
  ) {
    void this.render(tts, voiceId, text);
  }

  /** The audio from its first chunk, as it is rendered; ends early, quietly, when `signal` aborts. Throws what the TTS threw. */
  async *listen(signal: AbortSignal): AsyncGenerator<AudioFrame> {
    this.listeners++;
    try {
      for (let next = 0; !signal.aborted; ) {
        if (next < this.chunks.length) {
          yield this.chunks[next++]!;
          continue;
        }
        if (this.failure) throw this.failure.error;
        if (this.ended) return;
        await abortable(this.changed, signal).catch(() => undefined);
      }
    } finally {
      if (--this.listeners === 0 && !this.ended) {
        this.abort.abort();
        this.settle(undefined);
      }
    }
  }

  private async render(tts: TtsProvider, voiceId: string, text: string): Promise<void> {
    try {
      for await (const { piece: _, ...chunk } of tts.synthesize(streamOf(text), { voiceId, signal: this.abort.signal })) {
        if (this.abort.signal.aborted) break;
        this.chunks.push(chunk);
        this.wakeUp();
      }
    } catch (error) {
      this.failure = { error };
    }
    this.ended = true;
    this.wakeUp();
    this.settle(this.failure || this.abort.signal.aborted ? undefined : this.chunks);
  }

  private settle(audio: AudioFrame[] | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled(audio);
  }

  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = () => {
        this.changed = this.nextChange();
        resolve();
      };
    });
  }
}
