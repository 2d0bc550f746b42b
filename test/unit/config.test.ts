import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, secretValues } from "../../src/config.js";
import { analysisModel, engineOptions } from "../../src/engine-options.js";

const tmp = () => mkdtempSync(path.join(os.tmpdir(), "parley-config-"));

describe("loadConfig", () => {
  it("has the documented defaults", () => {
    const cwd = tmp();
    const c = loadConfig({ env: {}, cwd });
    expect(c.port).toBe(8080);
    expect(c.host).toBe("0.0.0.0");
    expect(c.dataDir).toBe(path.join(cwd, "data"));
    expect(c.baseUrl).toBe("http://localhost:8080");
    expect(c.plans.pro).toEqual({ requestsPerMinute: 300, agents: 25, webhooks: 10, concurrentCalls: 10, queuedCalls: 100 });
    expect(c.plans.agency).toEqual({ requestsPerMinute: 1000, agents: 250, webhooks: 50, concurrentCalls: 50, queuedCalls: 1000 });
    expect(c.webhooks.allowLoopbackHttp).toBe(false);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it("reads parley.config.json, and PARLEY_* variables win over it", () => {
    const cwd = tmp();
    writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ port: 9000, host: "127.0.0.1", plans: { pro: { agents: 3 } } }));
    const fromFile = loadConfig({ env: {}, cwd });
    expect(fromFile.port).toBe(9000);
    expect(fromFile.plans.pro.agents).toBe(3);
    expect(fromFile.plans.pro.webhooks).toBe(10);
    expect(fromFile.baseUrl).toBe("http://127.0.0.1:9000");
    const both = loadConfig({
      env: { PARLEY_PORT: "9100", PARLEY_BASE_URL: "https://voice.example.com/", PARLEY_PLAN_PRO_AGENTS: "7", PARLEY_DATA_DIR: "/var/lib/parley", PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1" },
      cwd,
    });
    expect(both.port).toBe(9100);
    expect(both.baseUrl).toBe("https://voice.example.com");
    expect(both.plans.pro.agents).toBe(7);
    expect(both.dataDir).toBe("/var/lib/parley");
    expect(both.webhooks.allowLoopbackHttp).toBe(true);
  });

  it.each([
    [{ PARLEY_PORT: "eighty" }, "PARLEY_PORT"],
    [{ PARLEY_PORT: "70000" }, "PARLEY_PORT"],
    [{ PARLEY_BASE_URL: "ftp://x" }, "PARLEY_BASE_URL"],
    [{ PARLEY_LOG_LEVEL: "loud" }, "PARLEY_LOG_LEVEL"],
    [{ PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "maybe" }, "PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP"],
    [{ PARLEY_PLAN_AGENCY_QUEUED_CALLS: "-1" }, "PARLEY_PLAN_AGENCY_QUEUED_CALLS"],
    [{ PARLEY_CONFIG: "/nonexistent/parley.json" }, "PARLEY_CONFIG"],
  ])("stops on %j with an error naming %s", (env, key) => {
    expect(() => loadConfig({ env, cwd: tmp() })).toThrow(ConfigError);
    expect(() => loadConfig({ env, cwd: tmp() })).toThrow(key);
  });

  it("names the file and key for bad or unknown keys in parley.config.json", () => {
    const cwd = tmp();
    writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ plans: { pro: { agnets: 3 } } }));
    expect(() => loadConfig({ env: {}, cwd })).toThrow("parley.config.json: plans.pro.agnets");
    writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ port: "x" }));
    expect(() => loadConfig({ env: {}, cwd })).toThrow("parley.config.json: port");
    writeFileSync(path.join(cwd, "parley.config.json"), "{ not json");
    expect(() => loadConfig({ env: {}, cwd })).toThrow(/not valid JSON/);
  });

  it("selects remote speech and language providers, embedded ones by default", () => {
    const cwd = tmp();
    const embedded = engineOptions(loadConfig({ env: {}, cwd }));
    expect(embedded.asr).toEqual([{ provider: "pocketsphinx", settings: {} }]);
    expect(embedded.dialogue).toEqual([{ provider: "rules", settings: {} }]);
    expect(embedded.tts).toEqual([{ provider: "flite", settings: {} }]);

    writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ engine: { llm: { modelSmall: "llama3.2" } } }));
    const config = loadConfig({
      cwd,
      env: {
        PARLEY_ASR_PROVIDER: "deepgram",
        PARLEY_ASR_URL: "http://127.0.0.1:9001/",
        PARLEY_ASR_API_KEY: "dg-secret",
        PARLEY_LLM_PROVIDER: "openai",
        PARLEY_LLM_URL: "http://127.0.0.1:11434",
        PARLEY_LLM_REQUEST_TIMEOUT_MS: "4000",
        PARLEY_TTS_PROVIDER: "openai",
        PARLEY_TTS_URL: "http://127.0.0.1:8880",
        PARLEY_TTS_MODEL: "kokoro",
      },
    });
    const remote = engineOptions(config);
    // Only what was set: each provider's defaults fill in the rest when it is created.
    expect(remote.asr).toEqual([{ provider: "deepgram", settings: { url: "http://127.0.0.1:9001/", apiKey: "dg-secret" } }]);
    expect(remote.dialogue).toEqual([{ provider: "openai", settings: { url: "http://127.0.0.1:11434", modelSmall: "llama3.2", requestTimeoutMs: 4000 } }]);
    expect(remote.tts).toEqual([{ provider: "openai", settings: { url: "http://127.0.0.1:8880", model: "kokoro" } }]);
    expect(analysisModel(config)).toEqual({ url: "http://127.0.0.1:11434", apiKey: null, models: { "llm-large": "gpt-4o", "llm-small": "llama3.2", "llm-alt": "gpt-4.1-mini" } });
    expect(secretValues(config)).toContain("dg-secret");
  });

  it("reads a fallback provider from PARLEY_*_FALLBACK_*, and longer chains from the file", () => {
    const cwd = tmp();
    const config = loadConfig({
      cwd,
      env: {
        PARLEY_LLM_PROVIDER: "anthropic",
        PARLEY_LLM_API_KEY: "sk-ant-first",
        PARLEY_LLM_FALLBACK_PROVIDER: "openai",
        PARLEY_LLM_FALLBACK_URL: "http://127.0.0.1:11434/v1",
        PARLEY_LLM_FALLBACK_MODEL_LARGE: "llama3.1:8b",
      },
    });
    expect(config.engine.llm).toEqual([
      { provider: "anthropic", settings: { apiKey: "sk-ant-first" } },
      { provider: "openai", settings: { url: "http://127.0.0.1:11434/v1", modelLarge: "llama3.1:8b" } },
    ]);
    expect(secretValues(config)).toContain("sk-ant-first");

    writeFileSync(
      path.join(cwd, "parley.config.json"),
      JSON.stringify({ engine: { tts: { chain: [{ provider: "elevenlabs", apiKey: "xi-key", sampleRate: 24000 }, { provider: "openai", url: "http://127.0.0.1:8880" }, { provider: "flite" }] } } }),
    );
    const chained = loadConfig({ cwd, env: {} });
    expect(chained.engine.tts.map((link) => link.provider)).toEqual(["elevenlabs", "openai", "flite"]);
    expect(secretValues(chained)).toContain("xi-key");
    // The chain and the flat settings of the same stage are one or the other.
    expect(() => loadConfig({ cwd, env: { PARLEY_TTS_MODEL: "tts-1-hd" } })).toThrow(/engine\.tts\.chain: give either the chain or engine\.tts\.model/);
  });

  it("refuses a fallback's settings without its provider, and an old file key with what replaced it", () => {
    const cwd = tmp();
    expect(() => loadConfig({ cwd, env: { PARLEY_ASR_FALLBACK_URL: "http://127.0.0.1:9000" } })).toThrow(/PARLEY_ASR_FALLBACK_URL \(engine\.asr\.fallback\.url\): is set, but PARLEY_ASR_FALLBACK_PROVIDER is not/);
    writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ engine: { llm: { models: { large: "gpt-4.1" } } } }));
    expect(() => loadConfig({ cwd, env: {} })).toThrow(/engine\.llm\.models: renamed: engine\.llm\.modelLarge/);
  });

  it("reads the database URL and the node's id and grace, refusing bad ones without quoting a password", () => {
    const cwd = tmp();
    const config = loadConfig({ env: { PARLEY_DATABASE_URL: "postgres://parley:pw@db:5432/parley", PARLEY_NODE_ID: "node-a", PARLEY_NODE_GRACE_MS: "45000" }, cwd });
    expect(config).toMatchObject({ databaseUrl: "postgres://parley:pw@db:5432/parley", node: { id: "node-a", graceMs: 45_000 } });
    expect(loadConfig({ env: {}, cwd })).toMatchObject({ databaseUrl: "", node: { id: "", graceMs: 60_000 } });
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig({ env, cwd });
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error("accepted");
    };
    const url = refused({ PARLEY_DATABASE_URL: "mysql://u:secretpw@db/parley" });
    expect(url.message).toContain("PARLEY_DATABASE_URL");
    expect(url.message).not.toContain("secretpw");
    expect(refused({ PARLEY_NODE_ID: "node a" }).message).toContain("PARLEY_NODE_ID");
    // A grace shorter than two heartbeats would take a node beating on time for lost.
    expect(refused({ PARLEY_NODE_GRACE_MS: "5000", PARLEY_CALL_HEARTBEAT_MS: "3000" }).message).toContain("PARLEY_NODE_GRACE_MS");
  });

  it("refuses unknown providers and non-http provider URLs, naming the variable", () => {
    const cwd = tmp();
    expect(() => loadConfig({ env: { PARLEY_ASR_PROVIDER: "whisper" }, cwd })).toThrow(/PARLEY_ASR_PROVIDER: must be one of pocketsphinx, deepgram, openai/);
    expect(() => loadConfig({ env: { PARLEY_LLM_PROVIDER: "openai", PARLEY_LLM_URL: "ftp://x" }, cwd })).toThrow(/PARLEY_LLM_URL \(engine\.llm\.url\): must be a http\/https URL/);
    expect(() => loadConfig({ env: { PARLEY_LLM_FALLBACK_PROVIDER: "anthropic", PARLEY_LLM_FALLBACK_REQUEST_TIMEOUT_MS: "soon" }, cwd })).toThrow(/PARLEY_LLM_FALLBACK_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ env: { PARLEY_TTS_PROVIDER: "eleven" }, cwd })).toThrow(ConfigError);
  });

  it("reads the SIP trunk's credentials, empty by default, and never quotes the password in errors", () => {
    const cwd = tmp();
    expect(loadConfig({ env: {}, cwd }).sip).toMatchObject({ trunkUser: "", trunkPassword: "", trunkRealm: "" });
    expect(loadConfig({ env: { PARLEY_SIP_TRUNK_REALM: "sip.example.net" }, cwd }).sip.trunkRealm).toBe("sip.example.net");
    const sip = loadConfig({ env: { PARLEY_SIP_TRUNK: "trunk.example.com", PARLEY_SIP_TRUNK_USER: "acme", PARLEY_SIP_TRUNK_PASSWORD: "s3cret pass" }, cwd }).sip;
    expect(sip).toMatchObject({ trunk: "trunk.example.com", trunkUser: "acme", trunkPassword: "s3cret pass" });
    writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ sip: { trunkPassword: 123456789 } }));
    const error = (() => {
      try {
        loadConfig({ env: {}, cwd });
      } catch (err) {
        return err as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toMatch(/sip\.trunkPassword: must be a non-empty string/);
    expect(error?.message).not.toContain("123456789");
  });

  it("reads the SIP caps, with defaults, and refuses values out of range", () => {
    const cwd = tmp();
    expect(loadConfig({ env: {}, cwd }).sip).toMatchObject({ maxCalls: 200, maxTransactions: 1000 });
    expect(loadConfig({ env: { PARLEY_SIP_MAX_CALLS: "20", PARLEY_SIP_MAX_TRANSACTIONS: "50" }, cwd }).sip).toMatchObject({ maxCalls: 20, maxTransactions: 50 });
    expect(() => loadConfig({ env: { PARLEY_SIP_MAX_CALLS: "0" }, cwd })).toThrow(/PARLEY_SIP_MAX_CALLS: must be an integer from 1/);
    expect(() => loadConfig({ env: { PARLEY_SIP_MAX_TRANSACTIONS: "5" }, cwd })).toThrow(/PARLEY_SIP_MAX_TRANSACTIONS: must be an integer from 10/);
  });

  it("reads the retention settings: kept for ever and a daily pass by default; days from 1", () => {
    const cwd = tmp();
    expect(loadConfig({ env: {}, cwd }).retention).toEqual({ days: null, intervalMs: 86_400_000 });
    expect(loadConfig({ env: { PARLEY_RETENTION_DAYS: "90", PARLEY_RETENTION_INTERVAL_MS: "3600000" }, cwd }).retention).toEqual({ days: 90, intervalMs: 3_600_000 });
    expect(() => loadConfig({ env: { PARLEY_RETENTION_DAYS: "0" }, cwd })).toThrow(/PARLEY_RETENTION_DAYS: must be an integer from 1 to 36500/);
    expect(() => loadConfig({ env: { PARLEY_RETENTION_INTERVAL_MS: "10" }, cwd })).toThrow(/PARLEY_RETENTION_INTERVAL_MS: must be an integer from 1000/);
  });

  it("checks PARLEY_CALL_PREFIXES", () => {
    const cwd = tmp();
    expect(loadConfig({ env: { PARLEY_CALL_PREFIXES: "+1, +44" }, cwd }).callPrefixes).toBe("+1, +44");
    expect(loadConfig({ env: { PARLEY_CALL_PREFIXES: "*" }, cwd }).callPrefixes).toBe("*");
    expect(() => loadConfig({ env: { PARLEY_CALL_PREFIXES: "44" }, cwd })).toThrow(/PARLEY_CALL_PREFIXES: must be "\*" or a comma-separated list/);
  });

  it("reads the webhook delivery settings: the reference's retry schedule by default, durations with units, or none", () => {
    const cwd = tmp();
    expect(loadConfig({ env: {}, cwd }).webhooks).toMatchObject({ timeoutMs: 5000, retryScheduleMs: [1000, 5000, 30000, 120000, 600000], concurrency: 32, hostConcurrency: 8 });
    expect(loadConfig({ env: { PARLEY_WEBHOOK_RETRY_SCHEDULE: "250ms, 2s,1m,1h" }, cwd }).webhooks.retryScheduleMs).toEqual([250, 2000, 60000, 3600000]);
    expect(loadConfig({ env: { PARLEY_WEBHOOK_RETRY_SCHEDULE: "none" }, cwd }).webhooks.retryScheduleMs).toEqual([]);
    const file = path.join(cwd, "parley.config.json");
    writeFileSync(file, JSON.stringify({ webhooks: { retryScheduleMs: [10, 20] } }));
    expect(loadConfig({ env: {}, cwd }).webhooks.retryScheduleMs).toEqual([10, 20]);
    for (const bad of ["5", "1s,,2s", "1d", "25h", "-1s", Array(21).fill("1s").join(",")]) {
      expect(() => loadConfig({ env: { PARLEY_WEBHOOK_RETRY_SCHEDULE: bad }, cwd: tmp() }), bad).toThrow(/PARLEY_WEBHOOK_RETRY_SCHEDULE: must be a comma-separated list/);
    }
    expect(() => loadConfig({ env: { PARLEY_WEBHOOK_TIMEOUT_MS: "50" }, cwd })).toThrow(/PARLEY_WEBHOOK_TIMEOUT_MS: must be an integer from 100/);
  });
});
