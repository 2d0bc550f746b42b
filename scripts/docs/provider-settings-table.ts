/**
 * The providers' rows of docs/configuration.md, written from the registry (the block between
 * the markers below): `npm run docs:providers` rewrites it, and a docs test fails while it is
 * stale, so a new provider's settings are documented without a hand-written row.
 *   node dist/scripts/docs/provider-settings-table.js
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { packageRoot, providersOf } from "../../engine/index.js";
import { CONFIG_STAGES, envSuffix, providerFields, stageFields, type ConfigStage } from "../../src/provider-settings.js";

export const BLOCK_START = "<!-- provider settings: written by npm run docs:providers -->";
export const BLOCK_END = "<!-- end of provider settings -->";
const PAGE = "docs/configuration.md";

const code = (value: unknown) => (value === "" ? "none" : `\`${String(value)}\``);
const WHAT: Record<ConfigStage, string> = { asr: "speech recognition", llm: "what the agents' model names run on", tts: "speech synthesis (Flite's voices are always offered besides)" };

/** The table of every provider setting, primary and fallback. */
export function providerSettingsTable(): string {
  const rows = ["| variable | file key | default | bounds | meaning |", "|---|---|---|---|---|"];
  for (const stage of Object.keys(CONFIG_STAGES) as ConfigStage[]) {
    const providers = providersOf(CONFIG_STAGES[stage]);
    const names = providers.map((p) => `\`${p.name}\``).join(", ");
    const upper = stage.toUpperCase();
    for (const fallback of [false, true]) {
      const env = (suffix: string) => `PARLEY_${upper}_${fallback ? "FALLBACK_" : ""}${suffix}`;
      const key = (field: string) => `engine.${stage}.${fallback ? "fallback." : ""}${field}`;
      rows.push(
        fallback
          ? `| \`${env("PROVIDER")}\` | \`${key("provider")}\` | none | ${names} | a second provider for ${WHAT[stage]}: it serves a request the first fails (after its retries) or leaves without output for 5 s; see [engines.md](engines.md#fallback-chains) |`
          : `| \`${env("PROVIDER")}\` | \`${key("provider")}\` | \`${providers[0]!.name}\` | ${names} | ${WHAT[stage]}; see [engines.md](engines.md#providers) |`,
      );
      for (const field of stageFields(stage)) {
        const having = providers.map((p) => ({ name: p.name, info: providerFields(p).find((f) => f.field === field) })).filter((p) => p.info);
        const defaults = having.map((p) => `${p.name}: ${p.info!.secret ? "none" : code(p.info!.defaultValue)}`).join("; ");
        const meaning = fallback ? `as \`PARLEY_${upper}_${envSuffix(field)}\`, for the fallback provider` : `${having[0]!.info!.description}${having.length < providers.length ? ` (${having.map((p) => p.name).join(", ")})` : ""}`;
        rows.push(`| \`${env(envSuffix(field))}\` | \`${key(field)}\` | ${defaults} | the provider's | ${meaning.replace(/\|/g, "\\|")} |`);
      }
    }
  }
  return rows.join("\n");
}

/** `page` with its block replaced by `table`. */
export function withProviderTable(page: string, table: string): string {
  const start = page.indexOf(BLOCK_START);
  const end = page.indexOf(BLOCK_END);
  if (start < 0 || end < start) throw new Error(`${PAGE} has no provider settings block (${BLOCK_START} ... ${BLOCK_END})`);
  return `${page.slice(0, start + BLOCK_START.length)}\n\n${table}\n\n${page.slice(end)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = path.join(packageRoot(import.meta.url), PAGE);
  writeFileSync(file, withProviderTable(readFileSync(file, "utf8"), providerSettingsTable()));
  process.stdout.write(`wrote the provider settings of ${PAGE}\n`);
}
