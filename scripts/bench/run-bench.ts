import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseWav } from "../../engine/audio/wav.js";
import { loadConfig } from "../../src/config.js";
import { integer, parseOptions, UsageError } from "../../src/cli/args.js";
import { startBenchServer, type BenchServer } from "./bench-server.js";
import { linesOf, loadConversations, type Conversation } from "./conversation.js";
import { NativeMediaClient, TwilioMediaClient, type MediaClient } from "./media-caller.js";
import { summarize, round } from "./percentiles.js";
import { playConversation, type CallResult, type Protocol } from "./play-conversation.js";
import { processTreeUsage } from "./process-tree-usage.js";
import { renderHtmlReport } from "./report-html.js";
import { renderTextSummary } from "./report-text.js";
import type { BenchResult, LevelResult } from "./bench-result.js";

export const BENCH_USAGE = `parley bench [--quick] [--concurrency 1,2,4] [--protocol native|twilio|both]
             [--conversations a,b] [--url URL --key KEY] [--out DIR] [--seed N]

Replays fixtures/conversations/ over the media WebSocket as real-time callers and writes
bench.json, bench.html and a summary to --out (default <data dir>/bench/). Without --url it
starts \`parley serve\` as a child process with a temporary data directory. --quick: the
quick conversations at 1 and 2 calls.`;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const FIXTURES = path.join(ROOT, "fixtures");
/** Below this level (PCM16) a fixture's tail is Flite's trailing silence, not speech. */
const SPEECH_FLOOR = 300;
const CPU_SAMPLE_MS = 250;

const BASE_AGENT = {
  name: "Bench agent",
  system_prompt: "You answer calls for Acme Dental.",
  voice_id: "flite-slt",
  first_message: "Hello, thanks for calling Acme Dental. How can I help you today?",
};

/** A fixture line without its trailing silence, so "last speech frame sent" is speech. */
function loadLine(name: string, rate: 8 | 16): Int16Array {
  const samples = parseWav(readFileSync(path.join(FIXTURES, "audio", `${name}.${rate}k.wav`))).samples;
  let end = samples.length;
  while (end > 0 && Math.abs(samples[end - 1]!) < SPEECH_FLOOR) end--;
  return samples.slice(0, end);
}

function parseLevels(raw: string | undefined, quick: boolean): number[] {
  if (raw === undefined) return quick ? [1, 2] : [1, 2, 4];
  const levels = raw.split(",").map((s) => integer(s.trim(), "concurrency", 1)!);
  if (levels.some((n) => n > 200)) throw new UsageError("--concurrency levels must be from 1 to 200");
  return levels;
}

async function api(baseUrl: string, key: string, method: string, urlPath: string, body?: unknown): Promise<any> {
  const res = await fetch(baseUrl + urlPath, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** `parley bench` / `npm run bench`: returns the exit code. */
export async function bench(argv: string[]): Promise<number> {
  const o = parseOptions(argv, {
    quick: { type: "boolean" },
    concurrency: { type: "string" },
    protocol: { type: "string" },
    conversations: { type: "string" },
    url: { type: "string" },
    key: { type: "string" },
    out: { type: "string" },
    seed: { type: "string" },
  });
  const quick = o.quick ?? false;
  const levels = parseLevels(o.concurrency, quick);
  const protocolOption = o.protocol ?? "native";
  if (!["native", "twilio", "both"].includes(protocolOption)) throw new UsageError("--protocol must be native, twilio or both");
  const protocols: Protocol[] = protocolOption === "both" ? ["native", "twilio"] : [protocolOption as Protocol];
  if (o.url && !(o.key ?? process.env.PARLEY_API_KEY)) throw new UsageError("--url needs --key or PARLEY_API_KEY");
  const seed = integer(o.seed, "seed", 0) ?? 1;
  const outDir = o.out ?? path.join(loadConfig().dataDir, "bench");

  let conversations = loadConversations(path.join(FIXTURES, "conversations"));
  if (o.conversations) {
    const wanted = o.conversations.split(",").map((s) => s.trim());
    const unknown = wanted.filter((w) => !conversations.some((c) => c.name === w));
    if (unknown.length) throw new UsageError(`unknown conversations: ${unknown.join(", ")}`);
    conversations = conversations.filter((c) => wanted.includes(c.name));
  } else if (quick) conversations = conversations.filter((c) => c.quick);

  const lines = new Set(conversations.flatMap(linesOf));
  const audio = { 8: new Map<string, Int16Array>(), 16: new Map<string, Int16Array>() };
  for (const line of lines) for (const rate of [8, 16] as const) audio[rate].set(line, loadLine(line, rate));

  const progress = (text: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
  const maxLevel = Math.max(...levels);
  let server: BenchServer | undefined;
  if (!o.url) {
    progress("starting parley serve (child process, temporary data directory)");
    server = await startBenchServer(maxLevel);
  }
  const baseUrl = (o.url ?? server!.baseUrl).replace(/\/+$/, "");
  const key = o.key ?? process.env.PARLEY_API_KEY ?? server!.key;
  const started = new Date();
  const agents = new Map<string, string>();
  try {
    for (const c of conversations) agents.set(c.name, (await api(baseUrl, key, "POST", "/v1/agents", { ...BASE_AGENT, ...c.agent, name: `Bench ${c.name}` })).id);
    const mediaToken = protocols.includes("twilio") ? ((await api(baseUrl, key, "GET", "/v1/account")).media_token as string) : "";
    const wsBase = baseUrl.replace(/^http/, "ws");

    const connect = (protocol: Protocol, agentId: string): Promise<MediaClient> =>
      protocol === "native"
        ? NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}&sample_rate=16000&record=false`, key, 16000)
        : TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, agent_id: agentId, record: "false" });

    const levelResults: LevelResult[] = [];
    for (const protocol of protocols) {
      for (const level of levels) {
        progress(`${protocol}: ${level} concurrent call${level > 1 ? "s" : ""}, ${conversations.length} conversation(s) each`);
        levelResults.push(await runLevel(protocol, level, conversations, server?.pid, (c) => connect(protocol, agents.get(c.name)!), (name) => audio[protocol === "native" ? 16 : 8].get(name)!, seed, progress));
      }
    }
    const result = buildResult({ started, quick, levels, protocols, seed, conversations, baseUrl, startedServer: server !== undefined, levelResults });
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, "bench.json"), JSON.stringify(result, null, 2) + "\n");
    writeFileSync(path.join(outDir, "bench.html"), renderHtmlReport(result));
    const summary = renderTextSummary(result);
    writeFileSync(path.join(outDir, "bench.txt"), summary);
    process.stdout.write(summary + `\nreport: ${path.join(outDir, "bench.html")}\nresults: ${path.join(outDir, "bench.json")}\n`);
    return result.calls.some((c) => c.error !== null || c.outcome?.passed === false) ? 1 : 0;
  } finally {
    // Against --url the agents live in someone's account: remove them (a started server goes away whole).
    if (!server) for (const id of agents.values()) await api(baseUrl, key, "DELETE", `/v1/agents/${id}`).catch(() => undefined);
    await server?.stop();
  }
}

async function runLevel(
  protocol: Protocol,
  level: number,
  conversations: Conversation[],
  serverPid: number | undefined,
  connect: (c: Conversation) => Promise<MediaClient>,
  audio: (line: string) => Int16Array,
  seed: number,
  progress: (text: string) => void,
): Promise<LevelResult> {
  const before = serverPid ? processTreeUsage(serverPid) : null;
  const clientBefore = process.cpuUsage();
  const wallStart = performance.now();
  let peakRss = before?.rssBytes ?? 0;
  let peakProcesses = before?.processes ?? 0;
  const sampler = setInterval(() => {
    const now = serverPid ? processTreeUsage(serverPid) : null;
    if (now) {
      peakRss = Math.max(peakRss, now.rssBytes);
      peakProcesses = Math.max(peakProcesses, now.processes);
    }
  }, CPU_SAMPLE_MS);
  const calls: CallResult[] = [];
  // Lanes start at different conversations, so simultaneous calls are not in lockstep.
  await Promise.all(
    Array.from({ length: level }, async (_, lane) => {
      for (let i = 0; i < conversations.length; i++) {
        const c = conversations[(i + lane) % conversations.length]!;
        let call: CallResult;
        try {
          const client = await connect(c);
          call = await playConversation(client, c, audio, { protocol, concurrency: level, lane, seed: seed + lane * 1000 + i });
        } catch (err) {
          call = { conversation: c.name, protocol, concurrency: level, lane, greeting_ms: null, turns: [], barge_in_ms: [], jitter_ms: [], outcome: null, error: (err as Error).message };
        }
        calls.push(call);
        const v2v = call.turns.map((t) => Math.round(t.voice_to_voice_ms)).join("/") || "-";
        const verdict = call.error ? `ERROR ${call.error}` : call.outcome ? (call.outcome.passed ? "ok" : `FAILED ${call.outcome.failures.join("; ")}`) : "outcome not checked";
        progress(`  ${protocol} x${level} lane ${lane} ${c.name}: greeting ${call.greeting_ms === null ? "-" : Math.round(call.greeting_ms)} ms, voice-to-voice ${v2v} ms, ${verdict}`);
      }
    }),
  );
  clearInterval(sampler);
  const wallMs = performance.now() - wallStart;
  const after = serverPid ? processTreeUsage(serverPid) : null;
  const clientCpu = process.cpuUsage(clientBefore);
  const serverCpuMs = before && after ? after.cpuMs - before.cpuMs : null;
  return {
    protocol,
    concurrency: level,
    wall_ms: round(wallMs),
    server_cpu_percent: serverCpuMs === null ? null : round((serverCpuMs / wallMs) * 100),
    server_cpu_percent_per_call: serverCpuMs === null ? null : round((serverCpuMs / wallMs / level) * 100),
    server_peak_rss_mb: serverPid ? round(peakRss / 1048576) : null,
    server_rss_mb_per_call: serverPid && before ? round((peakRss - before.rssBytes) / 1048576 / level) : null,
    server_peak_processes: serverPid ? peakProcesses : null,
    client_cpu_percent: round(((clientCpu.user + clientCpu.system) / 1000 / wallMs) * 100),
    calls,
  };
}

function buildResult(r: {
  started: Date;
  quick: boolean;
  levels: number[];
  protocols: Protocol[];
  seed: number;
  conversations: Conversation[];
  baseUrl: string;
  startedServer: boolean;
  levelResults: LevelResult[];
}): BenchResult {
  const calls = r.levelResults.flatMap((l) => l.calls);
  const turns = calls.flatMap((c) => c.turns);
  const stages = turns.flatMap((t) => (t.server ? [t.server] : []));
  const pick = (key: keyof (typeof stages)[number]) => stages.map((s) => s[key]).filter((v): v is number => v !== null);
  return {
    version: 1,
    started_at: r.started.toISOString(),
    finished_at: new Date().toISOString(),
    settings: {
      quick: r.quick,
      concurrency: r.levels,
      protocols: r.protocols,
      seed: r.seed,
      target: r.startedServer ? "child process (parley serve, temporary data directory, embedded engines)" : r.baseUrl,
      endpointing_ms: 500,
      conversations: r.conversations.map((c) => c.name),
      fixture_lines: [...new Set(r.conversations.flatMap(linesOf))].sort(),
    },
    machine: {
      platform: `${os.platform()} ${os.release()}`,
      arch: os.arch(),
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? "unknown",
      memory_gb: round(os.totalmem() / 1073741824),
      node: process.version,
    },
    metrics: {
      greeting_ms: summarize(calls.flatMap((c) => (c.greeting_ms === null ? [] : [c.greeting_ms]))),
      voice_to_voice_ms: summarize(turns.map((t) => t.voice_to_voice_ms)),
      barge_in_ms: summarize(calls.flatMap((c) => c.barge_in_ms)),
      jitter_ms: summarize(calls.flatMap((c) => c.jitter_ms)),
      endpointing_wait_ms: summarize(pick("endpointing_wait_ms")),
      asr_ms: summarize(pick("asr_ms")),
      first_token_ms: summarize(pick("first_token_ms")),
      first_tts_audio_ms: summarize(pick("first_tts_audio_ms")),
      first_frame_sent_ms: summarize(pick("first_frame_sent_ms")),
      server_voice_to_voice_ms: summarize(pick("server_voice_to_voice_ms")),
      pipeline_overhead_ms: summarize(pick("pipeline_overhead_ms")),
    },
    levels: r.levelResults.map(({ calls: levelCalls, ...level }) => ({
      ...level,
      calls: levelCalls.length,
      voice_to_voice_ms: summarize(levelCalls.flatMap((c) => c.turns.map((t) => t.voice_to_voice_ms))),
      greeting_ms: summarize(levelCalls.flatMap((c) => (c.greeting_ms === null ? [] : [c.greeting_ms]))),
      jitter_ms: summarize(levelCalls.flatMap((c) => c.jitter_ms)),
    })),
    calls,
  };
}
