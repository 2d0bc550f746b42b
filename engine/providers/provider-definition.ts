import type { z } from "zod";
import type { AsrProvider } from "./asr/asr-provider.js";
import type { DialogueProvider } from "./llm/dialogue-provider.js";
import type { ProviderStage } from "./provider-error.js";
import type { RetryPolicy } from "./provider-retry.js";
import type { TtsProvider } from "./tts/tts-provider.js";

/** What a provider of each stage implements. */
export interface StageProviders {
  asr: AsrProvider;
  dialogue: DialogueProvider;
  tts: TtsProvider;
}

/** What the engine hands every provider it creates. */
export interface ProviderContext {
  /** The retry policy to use (the engine's, which counts each retry for the metrics). */
  retry: RetryPolicy;
  /** This thread's share of the embedded engines' processes and threads (undefined: from the machine). */
  embedded: { recognizers?: number; ttsWorkers?: number };
}

/**
 * One provider as the registry (provider-registry.ts) knows it: its folder exports one of
 * these. Its settings are a zod object of flat values (strings, numbers, booleans), each
 * optional with its default and a `.describe()` line: the configuration derives a file key
 * (`engine.<stage>.<field>`) and a variable (`PARLEY_<STAGE>_<FIELD>`, the field's name in
 * upper snake case) for each, so a new provider needs no edit anywhere else.
 */
export interface ProviderDefinition<Stage extends ProviderStage = ProviderStage, Settings = unknown> {
  /** The value of `PARLEY_<STAGE>_PROVIDER` that selects it. */
  readonly name: string;
  readonly stage: Stage;
  /** One line for `parley providers`: what it talks to. */
  readonly description: string;
  /** Its settings; `parse({})` must give the defaults (an embedded provider has none). */
  readonly settings: z.ZodType<Settings>;
  /** Does the provider need the network (false: it runs inside Parley)? */
  readonly remote: boolean;
  create(settings: Settings, context: ProviderContext): StageProviders[Stage];
}

/** Declares a definition with its settings' type inferred from the schema. */
export function defineProvider<Stage extends ProviderStage, Schema extends z.ZodType>(definition: ProviderDefinition<Stage, z.output<Schema>> & { settings: Schema }): ProviderDefinition<Stage, z.output<Schema>> {
  return definition;
}
