import type { EngineOptions } from "../engine/index.js";
import type { Config } from "./config.js";

/** The engine's options from the configuration (empty API keys mean none: local servers need none). */
export function engineOptions(config: Config): EngineOptions {
  const { engine } = config;
  const key = (apiKey: string) => apiKey || undefined;
  return {
    vad: engine.vad,
    // 0: the engine derives them from the machine.
    callCapacity: engine.callCapacity || undefined,
    sessionWorkers: engine.sessionWorkers || undefined,
    asrRecognizers: engine.asrRecognizers || undefined,
    ttsWorkers: engine.ttsWorkers || undefined,
    asr: engine.asr.provider === "deepgram" ? { provider: "deepgram", url: engine.asr.url, apiKey: key(engine.asr.apiKey), model: engine.asr.model } : { provider: "pocketsphinx" },
    dialogue:
      engine.llm.provider === "openai"
        ? {
            provider: "openai",
            url: engine.llm.url,
            apiKey: key(engine.llm.apiKey),
            models: { "llm-large": engine.llm.models.large, "llm-small": engine.llm.models.small, "llm-alt": engine.llm.models.alt },
          }
        : { provider: "rules" },
    tts: engine.tts.provider === "openai" ? { provider: "openai", url: engine.tts.url, apiKey: key(engine.tts.apiKey), model: engine.tts.model } : { provider: "flite" },
  };
}
