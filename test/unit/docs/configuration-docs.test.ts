import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_FILE_ENV, loadConfig, SETTINGS, type Setting } from "../../../src/config.js";
import { packageRoot } from "../../../engine/index.js";
import { providerSettingsTable, withProviderTable } from "../../../scripts/docs/provider-settings-table.js";
import { documentationPages, proseLines, readPage, tableRows } from "../../helpers/markdown.js";

// docs/configuration.md is the operator's list of settings; the code's table (SETTINGS) is what
// is read. They must name the same settings, with the same file keys, bounds and defaults.

const root = packageRoot(import.meta.url);
const PAGE = "docs/configuration.md";
/** Variables the documentation may name that are not service settings (read by the CLI's clients, or by the example receiver). */
const NOT_SETTINGS = new Set(["PARLEY_API_KEY", "PARLEY_WEBHOOK_SECRET"]);

interface Documented {
  line: number;
  env: string;
  fileKey: string;
  defaultValue: string;
  bounds: string;
}

function documentedSettings(): Documented[] {
  return tableRows(readPage(root, PAGE), "variable").map(({ line, cells }) => ({
    line,
    env: unquote(cells[0] ?? ""),
    fileKey: unquote(cells[1] ?? ""),
    defaultValue: cells[2] ?? "",
    bounds: cells[3] ?? "",
  }));
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, "");
/** The integers a cell names, commas dropped: "0-3,600,000" -> [0, 3600000]. */
const integers = (cell: string) => [...cell.replace(/(\d),(?=\d{3})/g, "$1").matchAll(/\d+/g)].map((m) => Number(m[0]));
const quoted = (cell: string) => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);

function defaultOf(setting: Setting): unknown {
  const defaults = loadConfig({ env: {}, cwd: mkdtempSync(path.join(os.tmpdir(), "parley-config-docs-")) });
  // A stage's provider is the first of its chain (a fallback has none by default).
  const provider = /^engine\.(asr|llm|tts)\.(fallback\.)?provider$/.exec(setting.key);
  if (provider) return provider[2] ? "none" : defaults.engine[provider[1] as "asr" | "llm" | "tts"][0]!.provider;
  return setting.key.split(".").reduce<unknown>((value, part) => (value as Record<string, unknown>)[part], defaults);
}

/** What is wrong with one documented row of a setting the code has. */
function rowProblems(setting: Setting, row: Documented): string[] {
  const where = `${PAGE}:${row.line} ${setting.env}`;
  const problems: string[] = [];
  if (row.fileKey !== setting.key) problems.push(`${where}: file key is ${setting.key}, documented as ${row.fileKey}`);
  if (setting.kind === "int" || setting.kind === "port") {
    const [min, max] = setting.kind === "port" ? [0, 65535] : [setting.min ?? 0, setting.max];
    const documented = integers(row.bounds);
    if (documented[0] !== min || documented[1] !== max) problems.push(`${where}: bounds are ${min}-${max}, documented as "${row.bounds}"`);
    const value = defaultOf(setting);
    // An int whose default is null (unset) is documented as "unset: ...".
    const documentedDefault = value === null && row.defaultValue.startsWith("unset") ? null : integers(row.defaultValue)[0];
    if (setting.key !== "port" && documentedDefault !== value) problems.push(`${where}: default is ${String(value)}, documented as "${row.defaultValue}"`);
  }
  if (setting.kind === "enum") {
    const documented = quoted(row.bounds).sort();
    if (JSON.stringify(documented) !== JSON.stringify([...(setting.values ?? [])].sort())) {
      problems.push(`${where}: values are ${(setting.values ?? []).join(", ")}, documented as "${row.bounds}"`);
    }
    if ((quoted(row.defaultValue)[0] ?? row.defaultValue) !== defaultOf(setting)) problems.push(`${where}: default is ${String(defaultOf(setting))}, documented as "${row.defaultValue}"`);
  }
  if (setting.kind === "bool" && quoted(row.defaultValue)[0] !== String(defaultOf(setting))) {
    problems.push(`${where}: default is ${String(defaultOf(setting))}, documented as "${row.defaultValue}"`);
  }
  return problems;
}

describe(`the settings of ${PAGE}`, () => {
  it("documents every setting of src/config.ts, and only those", () => {
    const documented = documentedSettings();
    const documentedNames = new Set(documented.map((row) => row.env));
    const known = new Set([CONFIG_FILE_ENV, ...SETTINGS.map((s) => s.env)]);
    const undocumented = [...known].filter((env) => !documentedNames.has(env));
    const unknown = documented.filter((row) => !known.has(row.env)).map((row) => `${PAGE}:${row.line} ${row.env}`);
    const repeated = documented.filter((row, i) => documented.findIndex((other) => other.env === row.env) !== i).map((row) => `${PAGE}:${row.line} ${row.env}`);
    expect({ undocumented, unknown, repeated }).toEqual({ undocumented: [], unknown: [], repeated: [] });
  });

  it("gives each setting its file key, bounds and default as the code has them", () => {
    const byEnv = new Map(documentedSettings().map((row) => [row.env, row]));
    const problems = SETTINGS.flatMap((setting) => {
      const row = byEnv.get(setting.env);
      return row ? rowProblems(setting, row) : [];
    });
    expect(problems).toEqual([]);
  });

  it("has the provider settings as the registry defines them (npm run docs:providers rewrites them)", () => {
    const page = readFileSync(path.join(root, PAGE), "utf8");
    expect(withProviderTable(page, providerSettingsTable()), "run npm run build && npm run docs:providers").toBe(page);
  });

  it("names no PARLEY_ variable anywhere in the documentation that the code does not read", () => {
    const known = new Set([CONFIG_FILE_ENV, ...SETTINGS.map((s) => s.env), ...NOT_SETTINGS]);
    const unknown: string[] = [];
    for (const page of documentationPages(root)) {
      for (const { line, text } of proseLines(readPage(root, page))) {
        // A name followed by `<` or `*` is a pattern (PARLEY_WEBHOOK_*), not a variable.
        for (const match of text.matchAll(/\bPARLEY_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_<*])/g)) {
          if (!known.has(match[0])) unknown.push(`${page}:${line} ${match[0]}`);
        }
      }
    }
    expect(unknown).toEqual([]);
  });
});
