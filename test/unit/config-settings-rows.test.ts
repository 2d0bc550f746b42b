import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import { loadConfig, SETTINGS, type CarrierName, type Config, type Plan, type PlanLimits } from "../../src/config.js";
import type { LogLevel } from "../../src/core/logger.js";
import type { ProviderChoice, VadName } from "../../engine/index.js";

// Each setting of src/config.ts is written once, in its row (key, variable, checks, default,
// meaning); Config's type and the defaults are derived from the rows. These check that the
// rows are whole and that what is derived from them is what the rows say.

const tmp = () => mkdtempSync(path.join(os.tmpdir(), "parley-config-rows-"));
const own = SETTINGS.filter((s) => s.kind !== "provider" && !/^engine\.(asr|llm|tts)\./.test(s.key));
const valueAt = (config: Config, key: string) => key.split(".").reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], config);

describe("the settings rows", () => {
  it("give every setting but the providers' a meaning and a default", () => {
    expect(own.length).toBeGreaterThan(80);
    expect(own.filter((s) => !s.doc?.trim()).map((s) => s.key)).toEqual([]);
    expect(own.filter((s) => s.default === undefined).map((s) => s.key)).toEqual([]);
  });

  it("have defaults their own checks accept (an enum's among its values, an int's within its bounds, null only when nullable)", () => {
    const bad = own.filter((s) => {
      if (s.default === null) return !s.nullable;
      if (s.kind === "enum") return !(s.values ?? []).includes(s.default as string);
      if (s.kind === "port") return !Number.isInteger(s.default) || (s.default as number) < 0 || (s.default as number) > 65535;
      if (s.kind === "int") return !Number.isInteger(s.default) || (s.default as number) < (s.min ?? 0) || (s.default as number) > (s.max ?? Number.MAX_SAFE_INTEGER);
      if (s.kind === "bool") return typeof s.default !== "boolean";
      if (s.kind === "durations") return !Array.isArray(s.default);
      return typeof s.default !== "string";
    });
    expect(bad.map((s) => `${s.key}: ${JSON.stringify(s.default)}`)).toEqual([]);
  });

  it("are what loadConfig gives with nothing set (dataDir resolved, baseUrl derived from host and port)", () => {
    const cwd = tmp();
    const config = loadConfig({ env: {}, cwd });
    const differ = own
      .filter((s) => s.key !== "dataDir" && s.key !== "baseUrl")
      .filter((s) => JSON.stringify(valueAt(config, s.key)) !== JSON.stringify(s.default))
      .map((s) => `${s.key}: ${JSON.stringify(valueAt(config, s.key))}, row says ${JSON.stringify(s.default)}`);
    expect(differ).toEqual([]);
    expect(config.dataDir).toBe(path.join(cwd, "data"));
    expect(config.baseUrl).toBe("http://localhost:8080");
  });

  it("lend no default to a loaded configuration: changing one config's list changes neither the row nor the next config", () => {
    const first = loadConfig({ env: {}, cwd: tmp() });
    first.webhooks.retryScheduleMs.push(1);
    const row = SETTINGS.find((s) => s.key === "webhooks.retryScheduleMs")!;
    expect(row.default).toEqual([1_000, 5_000, 30_000, 120_000, 600_000]);
    expect(loadConfig({ env: {}, cwd: tmp() }).webhooks.retryScheduleMs).toEqual([1_000, 5_000, 30_000, 120_000, 600_000]);
  });

  it("derive Config's field types from the rows' kinds", () => {
    expectTypeOf<Config["port"]>().toEqualTypeOf<number>();
    expectTypeOf<Config["logLevel"]>().toEqualTypeOf<LogLevel>();
    expectTypeOf<Config["carrier"]>().toEqualTypeOf<CarrierName>();
    expectTypeOf<Config["engine"]["vad"]>().toEqualTypeOf<VadName>();
    expectTypeOf<Config["engine"]["enabled"]>().toEqualTypeOf<boolean>();
    expectTypeOf<Config["engine"]["asr"]>().toEqualTypeOf<ProviderChoice[]>();
    expectTypeOf<Config["webhooks"]["retryScheduleMs"]>().toEqualTypeOf<number[]>();
    expectTypeOf<Config["retention"]["days"]>().toEqualTypeOf<number | null>();
    expectTypeOf<Config["recordings"]["s3"]["prefix"]>().toEqualTypeOf<string>();
    expectTypeOf<Config["plans"]>().toEqualTypeOf<Record<Plan, PlanLimits>>();
  });
});
