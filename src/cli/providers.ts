import { PROVIDER_STAGES, providersOf } from "../../engine/index.js";
import type { Config } from "../config.js";
import { configStageOf, providerFields } from "../provider-settings.js";
import { PROVIDERS_USAGE } from "./usage.js";

export { PROVIDERS_USAGE };

interface ListedProvider {
  name: string;
  /** Where it runs: inside Parley (embedded) or a service it calls (remote). */
  runs: "embedded" | "remote";
  description: string;
  /** Its position in this configuration's chain (1 = serves first); null when unused. */
  chainPosition: number | null;
  settings: Array<{ variable: string; fallbackVariable: string; fileKey: string; default: unknown; meaning: string; configured: unknown }>;
}

/** The providers, by stage, with this configuration's chains. */
export function listProviders(config: Config): Record<string, ListedProvider[]> {
  const chains = { asr: config.engine.asr, llm: config.engine.llm, tts: config.engine.tts };
  return Object.fromEntries(
    PROVIDER_STAGES.map((stage) => {
      const configStage = configStageOf(stage);
      const chain = chains[configStage];
      const listed = providersOf(stage).map((definition): ListedProvider => {
        const position = chain.findIndex((link) => link.provider === definition.name);
        const configured = position >= 0 ? (chain[position]!.settings ?? {}) : {};
        return {
          name: definition.name,
          runs: definition.remote ? "remote" : "embedded",
          description: definition.description,
          chainPosition: position >= 0 ? position + 1 : null,
          settings: providerFields(definition).map((field) => ({
            variable: field.env,
            fallbackVariable: field.fallbackEnv,
            fileKey: field.key,
            default: field.secret ? "" : field.defaultValue,
            meaning: field.description,
            configured: field.field in configured ? (field.secret ? "(set)" : configured[field.field]) : null,
          })),
        };
      });
      return [configStage, listed];
    }),
  );
}

/** `parley providers`: prints the list (text, or JSON with --json); 2 on a bad argument. */
export function providers(args: string[], config: Config): number {
  const unknown = args.find((arg) => arg !== "--json");
  if (unknown !== undefined) {
    process.stderr.write(`parley providers: unknown argument ${unknown}\n\n${PROVIDERS_USAGE}\n`);
    return 2;
  }
  const list = listProviders(config);
  if (args.includes("--json")) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  for (const [stage, listed] of Object.entries(list)) {
    const chain = listed.filter((p) => p.chainPosition !== null).sort((a, b) => a.chainPosition! - b.chainPosition!);
    lines.push(`${stage}: ${chain.map((p) => p.name).join(" -> ")} in use (PARLEY_${stage.toUpperCase()}_PROVIDER)`);
    for (const provider of listed) {
      const mark = provider.chainPosition === null ? " " : String(provider.chainPosition);
      lines.push(`  ${mark} ${provider.name.padEnd(13)} ${provider.runs.padEnd(9)} ${provider.description}`);
      for (const setting of provider.settings) {
        const value = setting.configured !== null ? `= ${String(setting.configured)}` : `default ${setting.default === "" ? "none" : String(setting.default)}`;
        // The second of a chain set by variables is set by the _FALLBACK_ ones.
        const variable = provider.chainPosition === 2 ? setting.fallbackVariable : setting.variable;
        lines.push(`      ${variable.padEnd(32)} ${value}: ${setting.meaning}`);
      }
    }
    lines.push("");
  }
  lines.push("A second provider takes the same variables with _FALLBACK_ (PARLEY_LLM_FALLBACK_PROVIDER, ...); longer chains: engine.<stage>.chain in parley.config.json.");
  process.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}
