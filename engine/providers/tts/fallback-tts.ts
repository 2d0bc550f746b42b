import { Replayable } from "../../stream/replayable.js";
import type { ProviderChain } from "../provider-chain.js";
import type { SpeechChunk, TtsProvider } from "./tts-provider.js";
import type { VoiceInfo } from "./voice.js";

/**
 * The TTS providers of a chain behind one (see ProviderChain): each voice is spoken by the
 * provider that offers it; when that one fails before its first audio (or gives none in time),
 * the next provider of the chain says the same sentences in its voice nearest the agent's (the
 * same gender, else its first), and the call goes on.
 */
export class FallbackTts implements TtsProvider {
  readonly name: string;
  private readonly owners = new Map<string, number>();
  private readonly allVoices: readonly VoiceInfo[];

  constructor(private readonly chain: ProviderChain<TtsProvider>) {
    chain.links.forEach((link, i) => {
      for (const voice of link.voices()) {
        const owner = this.owners.get(voice.id);
        if (owner !== undefined) throw new Error(`voice ${voice.id} is offered by both ${chain.links[owner]!.name} and ${link.name}`);
        this.owners.set(voice.id, i);
      }
    });
    this.name = chain.links.map((p) => p.name).join("+");
    this.allVoices = Object.freeze(chain.links.flatMap((p) => p.voices()));
  }

  voices(): readonly VoiceInfo[] {
    return this.allVoices;
  }

  synthesize(text: AsyncIterable<string>, options: { voiceId: string; signal: AbortSignal }): AsyncIterable<SpeechChunk> {
    const owner = this.owners.get(options.voiceId);
    if (owner === undefined) throw new Error(`no TTS provider offers voice ${options.voiceId}`);
    const gender = this.allVoices.find((v) => v.id === options.voiceId)?.gender;
    const sentences = new Replayable(text);
    return this.chain.serve(
      (i, signal) => {
        const link = this.chain.links[i]!;
        const voices = link.voices();
        const voiceId = i === owner ? options.voiceId : (voices.find((v) => v.gender === gender) ?? voices[0])!.id;
        return link.synthesize(sentences.reader(), { voiceId, signal });
      },
      options.signal,
      // The text failing (the dialogue did) is no provider's fault: the next would fail the same way.
      // Its first sentence may come seconds after the turn starts (a slow model, a tool): the
      // first-audio clock starts when it is there.
      { preferred: owner, mayReplace: () => !sentences.failed, inputReady: sentences.first() },
    );
  }
}
