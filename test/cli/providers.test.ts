import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PROVIDERS } from "../../engine/index.js";
import { providers } from "../../src/cli/providers.js";
import { loadConfig } from "../../src/config.js";

function run(env: Record<string, string>, ...args: string[]) {
  const config = loadConfig({ env, cwd: mkdtempSync(path.join(os.tmpdir(), "parley-providers-")) });
  let stdout = "";
  let stderr = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  const code = providers(args, config);
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

afterEach(() => vi.restoreAllMocks());

describe("parley providers", () => {
  const env = { PARLEY_LLM_PROVIDER: "anthropic", PARLEY_LLM_API_KEY: "sk-ant-never-printed", PARLEY_LLM_FALLBACK_PROVIDER: "openai", PARLEY_LLM_FALLBACK_URL: "http://127.0.0.1:11434" };

  it("lists every provider of the registry by stage, with the chain in use and each setting's variable", () => {
    const { code, stdout } = run(env, "--json");
    expect(code).toBe(0);
    const list = JSON.parse(stdout) as Record<string, Array<{ name: string; chainPosition: number | null; settings: Array<{ variable: string; configured: unknown }> }>>;
    expect(Object.keys(list)).toEqual(["asr", "llm", "tts"]);
    expect(Object.values(list).flat().map((p) => p.name).sort()).toEqual(PROVIDERS.map((p) => p.name).sort());
    const llm = Object.fromEntries(list.llm!.map((p) => [p.name, p]));
    expect([llm.anthropic!.chainPosition, llm.openai!.chainPosition, llm.rules!.chainPosition]).toEqual([1, 2, null]);
    expect(llm.anthropic!.settings.find((s) => s.variable === "PARLEY_LLM_API_KEY")!.configured).toBe("(set)");
    expect(llm.openai!.settings.find((s) => s.variable === "PARLEY_LLM_URL")!.configured).toBe("http://127.0.0.1:11434");
    expect(list.asr!.find((p) => p.name === "pocketsphinx")!.chainPosition).toBe(1);
  });

  it("prints the chains as text, the fallback's settings under its _FALLBACK_ variables, never a key", () => {
    const { code, stdout } = run(env);
    expect(code).toBe(0);
    expect(stdout).toContain("llm: anthropic -> openai in use");
    expect(stdout).toMatch(/PARLEY_LLM_FALLBACK_URL\s+= http:\/\/127\.0\.0\.1:11434/);
    expect(stdout).toMatch(/PARLEY_LLM_API_KEY\s+= \(set\)/);
    expect(stdout).not.toContain("sk-ant-never-printed");
  });

  it("refuses an unknown argument with its usage", () => {
    const { code, stderr } = run({}, "--all");
    expect(code).toBe(2);
    expect(stderr).toContain("unknown argument --all");
  });
});
