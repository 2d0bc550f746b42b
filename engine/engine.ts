import { CallSession, type CallProviders, type CallSessionOptions } from "./call-session.js";
import type { AsrProvider } from "./providers/asr/asr-provider.js";
import { PocketsphinxProvider } from "./providers/asr/pocketsphinx/pocketsphinx-provider.js";
import type { DialogueProvider } from "./providers/llm/dialogue-provider.js";
import { createRulesDialogueProvider } from "./providers/llm/rules/rules-dialogue-provider.js";
import { FliteTts } from "./providers/tts/flite-tts.js";
import type { VoiceInfo } from "./providers/tts/voice.js";
import { createVadFactory, type VadName } from "./vad/vad-factory.js";

export interface EngineOptions {
  /** `silero` (default) or `webrtc`. */
  vad?: VadName;
  /** Most pocketsphinx recognizers alive at once (each ~100 MB, one per live call). */
  asrRecognizers?: number;
  /** Flite worker threads. */
  ttsWorkers?: number;
}

/**
 * The engine with its providers loaded once per process: VAD model, recognizer pool, TTS
 * workers, dialogue. `createEngine` loads them; `startCall` runs a call on a transport.
 */
export interface Engine {
  readonly voices: readonly VoiceInfo[];
  /** A new call session (not started: call `start()`). */
  createCall(options: Omit<CallSessionOptions, "providers">): CallSession;
  /** Releases every provider; live calls should be stopped first. */
  close(): Promise<void>;
}

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const tts = new FliteTts({ workers: options.ttsWorkers ?? 2 });
  const [vad] = await Promise.all([createVadFactory(options.vad), tts.start()]);
  const asr: AsrProvider & { close(): Promise<void> } = new PocketsphinxProvider({ maxRecognizers: options.asrRecognizers ?? 4 });
  const dialogue: DialogueProvider = createRulesDialogueProvider();
  const providers: CallProviders = { vad, asr, dialogue, tts };
  return {
    voices: tts.voices(),
    createCall: (callOptions) => new CallSession({ ...callOptions, providers }),
    close: async () => {
      await Promise.allSettled([asr.close(), tts.close(), vad.close()]);
    },
  };
}
