import { providerSettings, type CallAnalyzerOptions, type EngineOptions } from "../engine/index.js";
import type { Config } from "./config.js";

/** The engine's options from the configuration. */
export function engineOptions(config: Config): EngineOptions {
  const { engine } = config;
  return {
    vad: engine.vad,
    // 0: the engine derives them from the machine.
    callCapacity: engine.callCapacity || undefined,
    sessionWorkers: engine.sessionWorkers || undefined,
    asrRecognizers: engine.asrRecognizers || undefined,
    ttsWorkers: engine.ttsWorkers || undefined,
    asr: engine.asr,
    dialogue: engine.llm,
    tts: engine.tts,
  };
}

/**
 * The chat service call analyses go to: the first OpenAI-compatible provider of the dialogue
 * chain, with its models; none (the deterministic analysis) when the chain has none.
 */
export function analysisModel(config: Config): CallAnalyzerOptions["model"] {
  const choice = config.engine.llm.find((link) => link.provider === "openai");
  if (!choice) return undefined;
  const settings = providerSettings("dialogue", choice) as { url: string; apiKey: string; modelLarge: string; modelSmall: string; modelAlt: string };
  return { url: settings.url, apiKey: settings.apiKey || null, models: { "llm-large": settings.modelLarge, "llm-small": settings.modelSmall, "llm-alt": settings.modelAlt } };
}
