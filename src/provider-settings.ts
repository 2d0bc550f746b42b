import { findProvider, providerSettings, providersOf, ProviderSettingsError, type ProviderChoice, type ProviderDefinition, type ProviderStage } from "../engine/index.js";

/**
 * The providers' settings as the configuration reads them, derived from the engine's registry
 * (a new provider's settings need no edit here). Per stage (`asr`, `llm`, `tts`):
 * `PARLEY_<STAGE>_PROVIDER` and one variable per field any of its providers has
 * (`PARLEY_<STAGE>_<FIELD>`, the field in upper snake case: `apiKey` -> `API_KEY`), the same
 * with `_FALLBACK_` for a second provider, and in the file `engine.<stage>.chain`: a list of
 * `{ "provider": ..., <field>: ... }` for longer chains. An unset field takes the chosen
 * provider's default.
 */

/** The configuration's stage names, and the engine's. */
export const CONFIG_STAGES = { asr: "asr", llm: "dialogue", tts: "tts" } as const satisfies Record<string, ProviderStage>;
export type ConfigStage = keyof typeof CONFIG_STAGES;

/** A row of the settings table for a provider: provider names are an enum, fields are checked by the chosen provider's schema. */
export interface ProviderSettingRow {
  key: string;
  env: string;
  kind: "enum" | "provider";
  values?: readonly string[];
  secret?: boolean;
}

/** Where a stage's settings sit in the file and the environment, primary or fallback. */
function prefixes(stage: ConfigStage, fallback: boolean) {
  return { key: `engine.${stage}.${fallback ? "fallback." : ""}`, env: `PARLEY_${stage.toUpperCase()}_${fallback ? "FALLBACK_" : ""}` };
}

/** `apiKey` -> `API_KEY`. */
export function envSuffix(field: string): string {
  return field.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

/** The fields of a provider's settings, with their defaults. */
function fieldsOf(definition: ProviderDefinition): Record<string, unknown> {
  return definition.settings.parse({}) as Record<string, unknown>;
}

/** A provider's setting as `parley providers` and docs/configuration.md describe it. */
export interface ProviderFieldInfo {
  field: string;
  /** The variable for the primary provider, and the fallback's. */
  env: string;
  fallbackEnv: string;
  /** The file key (`engine.<stage>.<field>`; in a chain, the link's `<field>`). */
  key: string;
  defaultValue: unknown;
  description: string;
  secret: boolean;
}

/** The configuration stage a provider of `stage` is set under. */
export function configStageOf(stage: ProviderStage): ConfigStage {
  return (Object.keys(CONFIG_STAGES) as ConfigStage[]).find((s) => CONFIG_STAGES[s] === stage)!;
}

/** The settings of one provider, with where each is set. */
export function providerFields(definition: ProviderDefinition): ProviderFieldInfo[] {
  const stage = configStageOf(definition.stage);
  const shape = (definition.settings as unknown as { shape?: Record<string, { description?: string }> }).shape ?? {};
  return Object.entries(fieldsOf(definition)).map(([field, defaultValue]) => ({
    field,
    env: `${prefixes(stage, false).env}${envSuffix(field)}`,
    fallbackEnv: `${prefixes(stage, true).env}${envSuffix(field)}`,
    key: `${prefixes(stage, false).key}${field}`,
    defaultValue,
    description: shape[field]?.description ?? "",
    secret: isSecretField(field),
  }));
}

/** Every field the providers of `stage` have, in the registry's order. */
export function stageFields(stage: ConfigStage): string[] {
  return [...new Set(providersOf(CONFIG_STAGES[stage]).flatMap((p) => Object.keys(fieldsOf(p))))];
}

/** A credential: never quoted, and removed from log lines. */
const isSecretField = (field: string) => /key|secret|token|password/i.test(field);

/** The settings-table rows of every provider stage. */
export function providerSettingRows(): ProviderSettingRow[] {
  return (Object.keys(CONFIG_STAGES) as ConfigStage[]).flatMap((stage) =>
    [false, true].flatMap((fallback) => {
      const at = prefixes(stage, fallback);
      const names = providersOf(CONFIG_STAGES[stage]).map((p) => p.name);
      return [
        { key: `${at.key}provider`, env: `${at.env}PROVIDER`, kind: "enum" as const, values: names },
        ...stageFields(stage).map((field) => ({ key: `${at.key}${field}`, env: `${at.env}${envSuffix(field)}`, kind: "provider" as const, ...(isSecretField(field) ? { secret: true } : {}) })),
      ];
    }),
  );
}

/** The file keys a stage may hold besides its rows. */
export const CHAIN_FILE_KEYS = (Object.keys(CONFIG_STAGES) as ConfigStage[]).map((stage) => `engine.${stage}.chain`);

/** A bad provider setting, as the configuration reports it (the caller makes it a ConfigError). */
export class ProviderConfigError extends Error {
  constructor(
    readonly label: string,
    message: string,
  ) {
    super(message);
  }
}

/** Raw values of one stage as read from the file and environment: the rows' values, and the file's chain. */
export interface RawStage {
  provider?: unknown;
  fallback?: Record<string, unknown>;
  chain?: unknown;
  [field: string]: unknown;
}

/** A stage's chain from its raw values, each provider's settings checked by its schema. */
export function stageChain(stage: ConfigStage, raw: RawStage): ProviderChoice[] {
  const engineStage = CONFIG_STAGES[stage];
  const { provider, fallback, chain, ...fields } = raw;
  if (chain !== undefined) {
    const flat = [...Object.keys(fields), ...(provider === undefined ? [] : ["provider"]), ...Object.keys(fallback ?? {}).map((f) => `fallback.${f}`)];
    if (flat.length > 0) throw new ProviderConfigError(`engine.${stage}.chain`, `give either the chain or engine.${stage}.${flat[0]} (PARLEY_${stage.toUpperCase()}_* variables), not both`);
    if (!Array.isArray(chain) || chain.length === 0 || chain.length > 8) throw new ProviderConfigError(`engine.${stage}.chain`, "must be a list of 1 to 8 providers, each { \"provider\": name, ...its settings }");
    return chain.map((link, i) => {
      const label = `engine.${stage}.chain[${i}]`;
      if (link === null || typeof link !== "object" || Array.isArray(link) || typeof (link as RawStage).provider !== "string") throw new ProviderConfigError(label, "must be an object with a \"provider\" name");
      const { provider: name, ...settings } = link as Record<string, unknown>;
      return checkedChoice(engineStage, name as string, settings, (field) => `${label}.${field}`);
    });
  }
  const primaryName = typeof provider === "string" ? provider : providersOf(engineStage)[0]!.name;
  const links = [checkedChoice(engineStage, primaryName, fields, (field) => label(stage, false, field))];
  const { provider: fallbackName, ...fallbackFields } = fallback ?? {};
  if (typeof fallbackName === "string") links.push(checkedChoice(engineStage, fallbackName, fallbackFields, (field) => label(stage, true, field)));
  else if (Object.keys(fallbackFields).length > 0) {
    const field = Object.keys(fallbackFields)[0]!;
    throw new ProviderConfigError(label(stage, true, field), `is set, but ${prefixes(stage, true).env}PROVIDER is not: name the fallback provider`);
  }
  return links;
}

function label(stage: ConfigStage, fallback: boolean, field: string): string {
  const at = prefixes(stage, fallback);
  return `${at.env}${envSuffix(field)} (${at.key}${field})`;
}

/**
 * The provider `name` with the values of `raw` it has a field for (numbers and booleans read
 * from text as the field's default is typed), checked by its schema.
 */
function checkedChoice(stage: ProviderStage, name: string, raw: Record<string, unknown>, labelOf: (field: string) => string): ProviderChoice {
  const definition = findProvider(stage, name);
  if (!definition) throw new ProviderConfigError(labelOf("provider"), `unknown provider "${name}"; known: ${providersOf(stage).map((p) => p.name).join(", ")}`);
  const defaults = fieldsOf(definition);
  const settings: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(raw)) {
    if (!(field in defaults) || value === undefined) continue;
    settings[field] = typeof value === "string" && typeof defaults[field] === "number" && /^-?\d+$/.test(value.trim()) ? Number(value) : typeof value === "string" && typeof defaults[field] === "boolean" ? parseBool(value) : value;
  }
  try {
    providerSettings(stage, { provider: name, settings });
  } catch (err) {
    if (!(err instanceof ProviderSettingsError)) throw err;
    const field = err.field ?? "provider";
    // The schema's message never quotes the value; a credential's is not repeated either.
    throw new ProviderConfigError(labelOf(field), err.message.replace(/^.*?setting [^:]*: /, ""));
  }
  return { provider: name, settings };
}

function parseBool(value: string): boolean | string {
  const s = value.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return true;
  if (["0", "false", "no", "off"].includes(s)) return false;
  return value;
}

/** The credentials set in `chains`: the logger removes them from every line. */
export function chainSecrets(chains: readonly ProviderChoice[][]): string[] {
  return chains.flatMap((chain) => chain.flatMap((link) => Object.entries(link.settings ?? {}).filter(([field, value]) => isSecretField(field) && typeof value === "string" && value !== "").map(([, value]) => value as string)));
}
