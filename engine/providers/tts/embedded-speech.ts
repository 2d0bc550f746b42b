import { Resampler } from "../../audio/resampler.js";
import { FestivalTts } from "./festival/festival-tts.js";
import { FESTIVAL_VOICES, voiceInfo } from "./festival/festival-voices.js";
import { FliteTts } from "./flite/flite-tts.js";
import { FLITE_VOICES } from "./flite/flite-voices.js";
import type { TtsProvider } from "./tts-provider.js";
import type { VoiceInfo } from "./voice.js";

/**
 * Text said in an embedded voice (Flite or Festival), whole, at a chosen rate: the voices of
 * simulated callers (agent test runs). Each provider starts at its first use, with one worker
 * or process: a test run says a line at a time.
 */
export class EmbeddedSpeech {
  static readonly voices: readonly VoiceInfo[] = [...FLITE_VOICES, ...FESTIVAL_VOICES.map(voiceInfo)];
  private flite: Promise<FliteTts> | null = null;
  private festival: FestivalTts | null = null;

  /** Whether `voiceId` is one of the embedded voices. */
  static has(voiceId: string): boolean {
    return EmbeddedSpeech.voices.some((v) => v.id === voiceId);
  }

  /** `text` in `voiceId`, as PCM16 at `rate`. Rejects for an unknown voice or a failed synthesis. */
  async render(text: string, voiceId: string, rate: number, signal: AbortSignal): Promise<Int16Array> {
    const tts = await this.providerOf(voiceId);
    const parts: Int16Array[] = [];
    let resampler: Resampler | null = null;
    for await (const chunk of tts.synthesize(once(text), { voiceId, signal })) {
      if (chunk.sampleRate === rate) {
        parts.push(chunk.samples);
        continue;
      }
      resampler ??= new Resampler({ inputRate: chunk.sampleRate, outputRate: rate });
      parts.push(resampler.push(chunk.samples));
    }
    if (resampler) parts.push(resampler.flush());
    const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  async close(): Promise<void> {
    const flite = this.flite;
    this.flite = null;
    await Promise.all([flite?.then((tts) => tts.close(), () => undefined), this.festival?.close()]);
    this.festival = null;
  }

  private async providerOf(voiceId: string): Promise<TtsProvider> {
    const voice = EmbeddedSpeech.voices.find((v) => v.id === voiceId);
    if (!voice) throw new Error(`unknown embedded voice "${voiceId}"`);
    if (voice.provider === "festival") return (this.festival ??= new FestivalTts());
    this.flite ??= (async () => {
      const tts = new FliteTts({ workers: 1 });
      await tts.start();
      return tts;
    })();
    return this.flite;
  }
}

async function* once(text: string): AsyncIterable<string> {
  yield text;
}
