import { deepgramDefinition } from "./asr/deepgram/index.js";
import { openAiTranscriptionsDefinition } from "./asr/openai/index.js";
import { pocketsphinxDefinition } from "./asr/pocketsphinx/index.js";
import { anthropicDefinition } from "./llm/anthropic/index.js";
import { openAiDialogueDefinition } from "./llm/openai/index.js";
import { rulesDefinition } from "./llm/rules/index.js";
import type { ProviderContext, ProviderDefinition, StageProviders } from "./provider-definition.js";
import type { ProviderStage } from "./provider-error.js";
import { elevenLabsDefinition } from "./tts/elevenlabs/index.js";
import { festivalDefinition } from "./tts/festival/index.js";
import { fliteDefinition } from "./tts/flite/index.js";
import { openAiSpeechDefinition } from "./tts/openai/index.js";

/**
 * Every provider, each defined in its own folder: the configuration, `parley providers` and
 * the engine read them here. The first of each stage is its default (the embedded one).
 * Adding a provider is adding its folder and its line here (see docs/engines.md).
 */
export const PROVIDERS: readonly ProviderDefinition[] = [
  pocketsphinxDefinition,
  deepgramDefinition,
  openAiTranscriptionsDefinition,
  rulesDefinition,
  openAiDialogueDefinition,
  anthropicDefinition,
  fliteDefinition,
  festivalDefinition,
  openAiSpeechDefinition,
  elevenLabsDefinition,
] as ProviderDefinition[];

/** One provider of a chain as the engine is given it: its name and its settings as configured (checked by its schema). */
export interface ProviderChoice {
  provider: string;
  settings?: Record<string, unknown>;
}

/** The providers of `stage`, its default first. */
export function providersOf(stage: ProviderStage): ProviderDefinition[] {
  return PROVIDERS.filter((p) => p.stage === stage);
}

/** The provider of `stage` named `name`. */
export function findProvider(stage: ProviderStage, name: string): ProviderDefinition | undefined {
  return PROVIDERS.find((p) => p.stage === stage && p.name === name);
}

/** A setting the provider's schema refused: `field` names it, the message says why (never quoting a credential). */
export class ProviderSettingsError extends Error {
  override readonly name = "ProviderSettingsError";
  constructor(
    readonly stage: ProviderStage,
    readonly provider: string,
    readonly field: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** `choice`'s settings checked by its provider's schema, defaults filled in. Throws ProviderSettingsError. */
export function providerSettings(stage: ProviderStage, choice: ProviderChoice): unknown {
  const definition = findProvider(stage, choice.provider);
  if (!definition) throw new ProviderSettingsError(stage, choice.provider, undefined, `unknown ${stage} provider "${choice.provider}"; known: ${providersOf(stage).map((p) => p.name).join(", ")}`);
  const parsed = definition.settings.safeParse(choice.settings ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.map(String).join(".") || undefined;
  throw new ProviderSettingsError(stage, choice.provider, field, `${choice.provider} ${stage} setting ${field ?? ""}: ${issue.message}`);
}

/** Creates the provider `choice` names, with its checked settings. */
export function createProvider<Stage extends ProviderStage>(stage: Stage, choice: ProviderChoice, context: ProviderContext): StageProviders[Stage] {
  const settings = providerSettings(stage, choice);
  return (findProvider(stage, choice.provider) as ProviderDefinition<Stage>).create(settings, context);
}
