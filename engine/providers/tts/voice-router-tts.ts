import type { SpeechChunk, TtsProvider } from "./tts-provider.js";
import type { VoiceInfo } from "./voice.js";

/**
 * Several TTS providers behind one: each voice id belongs to exactly one provider (ids carry
 * the provider's prefix), and a call's `voice_id` picks the provider that speaks it. Lets the
 * embedded Flite voices stay available next to a remote service's.
 */
export class VoiceRouterTts implements TtsProvider {
  readonly name: string;
  private readonly byVoice = new Map<string, TtsProvider>();
  private readonly allVoices: readonly VoiceInfo[];

  constructor(providers: readonly TtsProvider[]) {
    for (const provider of providers) {
      for (const voice of provider.voices()) {
        const owner = this.byVoice.get(voice.id);
        if (owner) throw new Error(`voice ${voice.id} is offered by both ${owner.name} and ${provider.name}`);
        this.byVoice.set(voice.id, provider);
      }
    }
    this.name = providers.map((p) => p.name).join("+");
    this.allVoices = Object.freeze(providers.flatMap((p) => p.voices()));
  }

  voices(): readonly VoiceInfo[] {
    return this.allVoices;
  }

  synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    const provider = this.byVoice.get(options.voiceId);
    if (!provider) throw new Error(`no TTS provider offers voice ${options.voiceId}`);
    return provider.synthesize(text, options);
  }
}
