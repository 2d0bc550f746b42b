import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { rms } from "../../engine/audio/pcm16.js";
import { parseWav } from "../../engine/audio/wav.js";
import { QUIET_TAIL_DB } from "../../engine/turn/speech-detector.js";
import { loadConfig } from "../../src/config.js";
import { integer, parseOptions, UsageError } from "../../src/cli/args.js";
import { API_LOAD_CONNECTIONS, API_LOAD_PATHS, startApiLoad } from "./api-load.js";
import { startBenchServer, type BenchServer } from "./bench-server.js";
import { BENCH_ENDPOINTING_MODES, BENCH_ENDPOINTING_MS, linesOf, loadConversations, type Conversation, type EndpointingMode } from "./conversation.js";
import { NativeMediaClient, TwilioMediaClient, type MediaClient } from "./media-caller.js";
import { restClient } from "./rest-client.js";
import { startStandinProcess, type StandinProcess } from "./standin-process.js";
import { DEFAULT_STANDIN_DELAYS } from "../standins/standin-server.js";
import { summarize, round } from "./percentiles.js";
import { observeTwilioCall } from "./observe-twilio-call.js";
import { emptyCallResult, observeNativeEvents, playConversation, type CallResult, type ObservedCall, type Protocol } from "./play-conversation.js";
import { processTreeUsage } from "./process-tree-usage.js";
import { renderHtmlReport } from "./report-html.js";
import { renderTextSummary } from "./report-text.js";
import type { BenchResult, LevelResult } from "./bench-result.js";
import { failedCall, modeResult, samplesOf } from "./summarize-calls.js";
import {
  CAPACITY_MAX_LEVEL,
  CAPACITY_SEARCH_DEFAULTS,
  capacityBounds,
  capacityLevels,
  capacityOutcome,
  DEFAULT_EMBEDDED_V2V_P95_MS,
  DEFAULT_JITTER_P95_MS,
  judgeLevel,
  levelFigures,
  parseCapacitySearch,
  searchConversations,
  STANDIN_V2V_HEADROOM_MS,
  standinV2vFloorMs,
  type CapacityLevel,
  type CapacityResult,
  type CapacitySearch,
  type Providers,
} from "./capacity.js";

export const BENCH_USAGE = `npm run bench -- [--quick] [--providers embedded|standin] [--concurrency 1,2,4,8]
                 [--protocol native|twilio|both] [--endpointing fixed,adaptive]
                 [--conversations a,b] [--url URL --key KEY] [--out DIR] [--seed N] [--api-load]
                 [--find-capacity [--from N] [--step N] [--max N] [--v2v-p95-ms MS] [--jitter-p95-ms MS]]

Replays fixtures/conversations/ over the media WebSocket as real-time callers and writes
bench.json, bench.html and a summary to --out (default <data dir>/bench/). Without --url it
starts \`parley serve\` as a child process with a temporary data directory. With --url,
--protocol twilio|both rotates the account's media token (use an account kept for the bench).
--providers embedded (default): pocketsphinx, rules, Flite; every lane plays every
  conversation; levels 1,2,4,8.
--providers standin: cloud stand-ins answering with fixed delays (Deepgram-, OpenAI chat- and
  OpenAI speech-compatible, in their own process) to measure the media engine apart from
  model compute; each lane plays one conversation; levels 10,50,100,200; outcomes are not
  checked (the replies are canned).
--endpointing: the agents' endpointing modes, compared side by side; each mode runs every
  protocol and level with its own agents (default fixed,adaptive). fixed: the caller's turn ends after
  ${BENCH_ENDPOINTING_MS.fixed} ms of silence; adaptive: after a short pause when its words form a
  complete turn, after up to ${BENCH_ENDPOINTING_MS.adaptive} ms when they do not ("i need a", "um").
--quick: the quick conversations at 1 and 2 calls (10 with stand-ins).
--api-load: while each level's calls run, autocannon (its own process, ${API_LOAD_CONNECTIONS} connections)
  sends the same key's requests to ${API_LOAD_PATHS.join(" and ")}; the summary gives the
  requests per second achieved beside the calls' outgoing frame jitter p95 (target: 20 ms).
  The started server lifts the plan's rate limit for it; with --url, the account's limit
  applies (429s are counted as non-2xx). E.g. --providers standin --concurrency 20
  --protocol native --endpointing fixed --api-load.
--find-capacity: instead of fixed levels, raises the concurrent calls per protocol and
  endpointing mode (default --endpointing fixed for the search) from --from in steps of --step
  up to --max (at most ${CAPACITY_MAX_LEVEL}), each lane playing one conversation per level, and stops
  at the first level that does not hold (after a warm-up of one call per conversation, not
  judged; --quick skips it): a level holds when no call failed, voice-to-voice
  p95 is at most --v2v-p95-ms (embedded: ${DEFAULT_EMBEDDED_V2V_P95_MS}; stand-ins: their delays and the
  endpointing wait + ${STANDIN_V2V_HEADROOM_MS}, ${standinV2vFloorMs(DEFAULT_STANDIN_DELAYS, BENCH_ENDPOINTING_MS.fixed) + STANDIN_V2V_HEADROOM_MS} in fixed mode) and frame jitter p95 at most
  --jitter-p95-ms (${DEFAULT_JITTER_P95_MS}). It plays only conversations with a caller turn to time (not
  backchannel(s), barge-in, dtmf, silence, voicemail). Reports the largest level that held,
  why the search stopped, CPU and memory per call (bench.json "capacity", a chart each in
  bench.html); exits 0 when the search ran, whatever it found. Levels: ${searchText("embedded", "full")}
  embedded, ${searchText("standin", "full")} with stand-ins; with --quick ${searchText("embedded", "quick")}
  and ${searchText("standin", "quick")}.`;

function searchText(providers: Providers, kind: "full" | "quick"): string {
  const d = CAPACITY_SEARCH_DEFAULTS[providers][kind];
  return `--from ${d.from} --step ${d.step} --max ${d.max}`;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const FIXTURES = path.join(ROOT, "fixtures");
const CPU_SAMPLE_MS = 250;
/** Calls of a level start this far apart: 50 new calls a second. */
const ARRIVAL_INTERVAL_MS = 20;

/** A voice of the speech stand-in (OpenAI-compatible), so TTS goes to the stand-in. */
const STANDIN_VOICE = "openai-alloy";

const BASE_AGENT = {
  name: "Bench agent",
  system_prompt: "You answer calls for Acme Dental.",
  voice_id: "flite-slt",
  first_message: "Hello, thanks for calling Acme Dental. How can I help you today?",
};

/**
 * A fixture line cut after its last 20 ms frame within QUIET_TAIL_DB of its loudest: the end of
 * speech by the same acoustic rule the service's speech detector uses, so "last speech frame
 * sent" and the server's end of speech name the same moment.
 */
function loadLine(name: string, rate: 8 | 16): Int16Array {
  const samples = parseWav(readFileSync(path.join(FIXTURES, "audio", `${name}.${rate}k.wav`))).samples;
  const frame = rate * 20;
  const levels: number[] = [];
  for (let at = 0; at < samples.length; at += frame) levels.push(rms(samples.subarray(at, at + frame)));
  const floor = Math.max(...levels) * 10 ** (-QUIET_TAIL_DB / 20);
  let last = levels.length - 1;
  while (last > 0 && levels[last]! < floor) last--;
  return samples.slice(0, (last + 1) * frame);
}

/** `--concurrency 1,2,4`: the levels run; without it, the defaults of the providers and `--quick`. */
export function parseLevels(raw: string | undefined, quick: boolean, providers: Providers): number[] {
  if (raw === undefined) return providers === "standin" ? (quick ? [10] : [10, 50, 100, 200]) : quick ? [1, 2] : [1, 2, 4, 8];
  const levels = raw.split(",").map((s) => integer(s.trim(), "concurrency", 1)!);
  if (levels.some((n) => n > 200)) throw new UsageError("--concurrency levels must be from 1 to 200");
  return levels;
}

/** `--endpointing fixed,adaptive`: the modes in the order given (default: every mode). */
export function parseEndpointingModes(raw: string | undefined): EndpointingMode[] {
  if (raw === undefined) return [...BENCH_ENDPOINTING_MODES];
  const modes = raw.split(",").map((s) => s.trim());
  const unknown = modes.filter((m) => !(BENCH_ENDPOINTING_MODES as string[]).includes(m));
  if (modes.length === 0 || unknown.length) throw new UsageError(`--endpointing takes a comma list of ${BENCH_ENDPOINTING_MODES.join(", ")}${unknown.length ? `, not ${unknown.map((m) => JSON.stringify(m)).join(", ")}` : ""}`);
  if (new Set(modes).size !== modes.length) throw new UsageError("--endpointing lists a mode twice");
  return modes as EndpointingMode[];
}

/** The POST /v1/agents fields of a mode: they override the conversation's own. */
export function endpointingFields(mode: EndpointingMode): { endpointing_mode: EndpointingMode; endpointing_ms: number } {
  return { endpointing_mode: mode, endpointing_ms: BENCH_ENDPOINTING_MS[mode] };
}

/** `npm run bench`: returns the exit code. */
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
    providers: { type: "string" },
    endpointing: { type: "string" },
    "api-load": { type: "boolean" },
    "find-capacity": { type: "boolean" },
    from: { type: "string" },
    step: { type: "string" },
    max: { type: "string" },
    "v2v-p95-ms": { type: "string" },
    "jitter-p95-ms": { type: "string" },
  });
  const apiLoad = o["api-load"] ?? false;
  const quick = o.quick ?? false;
  const providers = (o.providers ?? "embedded") as Providers;
  if (providers !== "embedded" && providers !== "standin") throw new UsageError("--providers must be embedded or standin");
  if (providers === "standin" && o.url) throw new UsageError("--providers standin starts its own server: it cannot be combined with --url");
  const findCapacity = o["find-capacity"] ?? false;
  const searchFlags = (["from", "step", "max", "v2v-p95-ms", "jitter-p95-ms"] as const).filter((f) => o[f] !== undefined);
  if (!findCapacity && searchFlags.length) throw new UsageError(`${searchFlags.map((f) => `--${f}`).join(", ")} ${searchFlags.length > 1 ? "go" : "goes"} with --find-capacity`);
  if (findCapacity && o.concurrency !== undefined) throw new UsageError("--find-capacity chooses its own levels (--from, --step, --max): not with --concurrency");
  const search: CapacitySearch | null = findCapacity ? parseCapacitySearch(o, providers, quick) : null;
  const givenBounds = { v2vP95Ms: integer(o["v2v-p95-ms"], "v2v-p95-ms", 1), jitterP95Ms: integer(o["jitter-p95-ms"], "jitter-p95-ms", 1) };
  const levels = search ? capacityLevels(search) : parseLevels(o.concurrency, quick, providers);
  const protocolOption = o.protocol ?? "native";
  if (!["native", "twilio", "both"].includes(protocolOption)) throw new UsageError("--protocol must be native, twilio or both");
  const protocols: Protocol[] = protocolOption === "both" ? ["native", "twilio"] : [protocolOption as Protocol];
  // The search runs one mode unless told otherwise: each mode is a ramp of its own.
  const modes = parseEndpointingModes(o.endpointing ?? (findCapacity ? "fixed" : undefined));
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
  const leftOut = search ? conversations.filter((c) => !searchConversations(conversations).includes(c)) : [];
  if (search) conversations = searchConversations(conversations);

  const lines = new Set(conversations.flatMap(linesOf));
  const audio = { 8: new Map<string, Int16Array>(), 16: new Map<string, Int16Array>() };
  for (const line of lines) for (const rate of [8, 16] as const) audio[rate].set(line, loadLine(line, rate));

  const progress = (text: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
  if (leftOut.length) progress(`left out of the capacity search (no voice-to-voice turn to judge): ${leftOut.map((c) => c.name).join(", ")}`);
  const maxLevel = Math.max(...levels);
  let server: BenchServer | undefined;
  let standins: StandinProcess | undefined;
  if (providers === "standin") {
    standins = await startStandinProcess(DEFAULT_STANDIN_DELAYS);
    progress(`cloud stand-ins at ${standins.url} (child process): ${JSON.stringify(DEFAULT_STANDIN_DELAYS)}`);
  }
  if (!o.url) {
    progress("starting parley serve (child process, temporary data directory)");
    // The API load is one key's requests as fast as the service answers: past any plan's rate limit.
    const env = { ...(standins ? standinEnv(standins.url) : {}), ...(apiLoad ? { PARLEY_PLAN_AGENCY_REQUESTS_PER_MINUTE: "1000000" } : {}) };
    server = await startBenchServer(maxLevel, env).catch(async (err: unknown) => {
      await standins?.stop();
      throw err;
    });
  }
  const baseUrl = (o.url ?? server!.baseUrl).replace(/\/+$/, "");
  const key = o.key ?? process.env.PARLEY_API_KEY ?? server!.key;
  const api = restClient(baseUrl, key);
  const started = new Date();
  /**
   * Agent ids by mode and protocol, then conversation: each protocol has agents of its own, so
   * what a conversation leaves behind on one (a booked time) is not there for the other.
   */
  const agents = new Map<string, Map<string, string>>();
  const agentsOf = (mode: EndpointingMode, protocol: Protocol) => `${mode}/${protocol}`;
  try {
    const voice = providers === "standin" ? { voice_id: STANDIN_VOICE } : {};
    for (const mode of modes) {
      for (const protocol of protocols) {
        const byConversation = new Map<string, string>();
        agents.set(agentsOf(mode, protocol), byConversation);
        for (const c of conversations) {
          const body = { ...BASE_AGENT, ...c.agent, ...endpointingFields(mode), ...voice, name: `Bench ${c.name} (${mode}, ${protocol})` };
          const agent = await api("POST", "/v1/agents", body).catch((err: Error) => {
            throw new Error(/endpointing_mode/.test(err.message) ? `${err.message} (a service older than endpointing modes?)` : err.message);
          });
          byConversation.set(c.name, agent.id);
        }
      }
    }
    // The token is shown only when made: a Twilio run makes a new one (the account's previous one stops working).
    const mediaToken = protocols.includes("twilio") ? ((await api("POST", "/v1/account/media-token/rotate")).media_token as string) : "";
    const wsBase = baseUrl.replace(/^http/, "ws");

    const connect = (protocol: Protocol, agentId: string): Promise<MediaClient> =>
      protocol === "native"
        ? NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}&sample_rate=16000&record=false`, key, 16000)
        : TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, agent_id: agentId, record: "false" });

    const levelResults: LevelResult[] = [];
    const capacity: CapacityResult[] = [];
    // The search's memory per call counts from the idle server (before any call), not from each level's start.
    const idle = server ? processTreeUsage(server.pid) : null;
    const idleRssMb = idle ? round(idle.rssBytes / 1048576) : null;
    for (const mode of modes) {
      for (const protocol of protocols) {
        const agentOf = (c: Conversation) => agents.get(agentsOf(mode, protocol))!.get(c.name)!;
        const bounds = search && capacityBounds(givenBounds, providers, DEFAULT_STANDIN_DELAYS, BENCH_ENDPOINTING_MS[mode]);
        if (search && bounds) progress(`[${mode}] ${protocol}: capacity search from ${search.from} in steps of ${search.step} up to ${search.max}; a level holds with no failed call, v2v p95 <= ${bounds.v2v_p95_ms} ms, jitter p95 <= ${bounds.jitter_p95_ms} ms`);
        const judged: CapacityLevel[] = [];
        const caller: Caller = {
          mode,
          connect: (c) => connect(protocol, agentOf(c)),
          audio: (name) => audio[protocol === "native" ? 16 : 8].get(name)!,
          // Canned stand-in replies make outcomes meaningless; Twilio streams carry no events,
          // so their outcome is read back from the REST API.
          observe:
            providers === "standin"
              ? null
              : protocol === "twilio"
                ? (c, client) => observeTwilioCall(api, agentOf(c), client as TwilioMediaClient)
                : (_c, client) => Promise.resolve(observeNativeEvents(client)),
        };
        const pids = { server: server?.pid, standins: standins?.pid };
        if (search && !quick) {
          // The first calls of an agent and protocol pay once for what later calls find ready (the
          // greeting's speech, recognizers, compiled code): a search judged its first level by them.
          progress(`[${mode}] ${protocol}: warm-up, ${conversations.length} call(s), one per conversation (not judged, not reported)`);
          await runLevel(protocol, conversations.length, conversations, 1, pids, caller, seed, progress, null);
        }
        for (const level of levels) {
          // A search level lasts one conversation: each lane plays one, as with the stand-ins.
          const perLane = providers === "standin" || search ? 1 : conversations.length;
          progress(`[${mode}] ${protocol}: ${level} concurrent call${level > 1 ? "s" : ""}, ${perLane} conversation(s) each`);
          const load = apiLoad ? { baseUrl, key } : null;
          const levelResult = await runLevel(protocol, level, conversations, perLane, pids, caller, seed, progress, load);
          levelResults.push(levelResult);
          if (!bounds) continue;
          const verdict = judgeLevel(levelFigures(levelResult, idleRssMb), bounds);
          judged.push(verdict);
          progress(`  [${mode}] ${protocol} x${level}: ${verdict.holds ? "holds" : `crossed ${verdict.crossed.join(", ")}`} (v2v p95 ${verdict.v2v_p95_ms ?? "-"} ms, jitter p95 ${verdict.jitter_p95_ms ?? "-"} ms, ${verdict.failed_calls} failed)`);
          if (!verdict.holds) break;
        }
        if (search && bounds) capacity.push({ protocol, providers, endpointing_mode: mode, bounds, search, ...capacityOutcome(judged), levels: judged });
      }
    }
    const tried = [...new Set(levelResults.map((l) => l.concurrency))].sort((a, b) => a - b);
    const result = buildResult({ started, quick, providers, levels: search ? tried : levels, protocols, modes, seed, conversations, baseUrl, startedServer: server !== undefined, levelResults, capacity: search ? capacity : null });
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, "bench.json"), JSON.stringify(result, null, 2) + "\n");
    writeFileSync(path.join(outDir, "bench.html"), renderHtmlReport(result));
    const summary = renderTextSummary(result);
    writeFileSync(path.join(outDir, "bench.txt"), summary);
    process.stdout.write(summary + `\nreport: ${path.join(outDir, "bench.html")}\nresults: ${path.join(outDir, "bench.json")}\n`);
    // A search that ran has done its job whatever it found: the summary says why it stopped.
    if (search) return 0;
    return result.calls.some(failedCall) ? 1 : 0;
  } finally {
    // Against --url the agents live in someone's account: remove them (a started server goes away whole).
    if (!server) for (const byConversation of agents.values()) for (const id of byConversation.values()) await api("DELETE", `/v1/agents/${id}`).catch(() => undefined);
    await server?.stop();
    await standins?.stop();
  }
}

/** The service's provider settings for the stand-ins (every agent model name maps to one canned model). */
function standinEnv(url: string): NodeJS.ProcessEnv {
  return {
    PARLEY_ASR_PROVIDER: "deepgram",
    PARLEY_ASR_URL: url,
    PARLEY_LLM_PROVIDER: "openai",
    PARLEY_LLM_URL: url,
    PARLEY_TTS_PROVIDER: "openai",
    PARLEY_TTS_URL: url,
  };
}

/** How one protocol's calls (in one endpointing mode) are placed, fed and checked. */
interface Caller {
  mode: EndpointingMode;
  connect(c: Conversation): Promise<MediaClient>;
  audio(line: string): Int16Array;
  /** null: outcomes are not checked. */
  observe: ((c: Conversation, client: MediaClient) => Promise<ObservedCall>) | null;
}

async function runLevel(
  protocol: Protocol,
  level: number,
  conversations: Conversation[],
  perLane: number,
  pids: { server: number | undefined; standins: number | undefined },
  caller: Caller,
  seed: number,
  progress: (text: string) => void,
  apiLoadTarget: { baseUrl: string; key: string } | null,
): Promise<LevelResult> {
  const serverPid = pids.server;
  const before = serverPid ? processTreeUsage(serverPid) : null;
  const standinsBefore = pids.standins ? processTreeUsage(pids.standins) : null;
  const clientBefore = process.cpuUsage();
  // The client's own event-loop delay: when it is large, arrival times (jitter) partly measure the client.
  const clientLoop = monitorEventLoopDelay({ resolution: 5 });
  clientLoop.enable();
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
  const load = apiLoadTarget ? startApiLoad(apiLoadTarget.baseUrl, apiLoadTarget.key) : null;
  // Lanes start at different conversations, so simultaneous calls are not in lockstep, and
  // arrive ARRIVAL_INTERVAL_MS apart, as calls do, rather than all in the same millisecond.
  await Promise.all(
    Array.from({ length: level }, async (_, lane) => {
      await new Promise((resolve) => setTimeout(resolve, lane * ARRIVAL_INTERVAL_MS));
      for (let i = 0; i < perLane; i++) {
        const c = conversations[(i + lane) % conversations.length]!;
        let call: CallResult;
        try {
          const client = await caller.connect(c);
          const observe = caller.observe;
          const where = { protocol, endpointing_mode: caller.mode, concurrency: level, lane };
          call = await playConversation(client, c, caller.audio, { ...where, seed: seed + lane * 1000 + i }, observe && ((cl) => observe(c, cl)));
        } catch (err) {
          call = { ...emptyCallResult(c.name, { protocol, endpointing_mode: caller.mode, concurrency: level, lane }), error: (err as Error).message };
        }
        calls.push(call);
        const v2v = call.turns.map((t) => Math.round(t.voice_to_voice_ms)).join("/") || "-";
        const failures = call.outcome?.failures.join("; ");
        const verdict = call.error
          ? `ERROR ${call.error}`
          : call.outcome === null
            ? "outcome not checked"
            : call.outcome.passed
              ? "ok"
              : call.outcome.required
                ? `FAILED ${failures}`
                : `not met (not required in ${caller.mode} mode): ${failures}`;
        const early = call.false_endpoints ? `, ${call.false_endpoints} false endpoint(s)` : "";
        const stops = call.backchannels ? `, backchannels ${call.backchannels} (stopped ${call.backchannel_false_stops}, resumed ${call.backchannel_resumes})` : "";
        progress(`  [${caller.mode}] ${protocol} x${level} lane ${lane} ${c.name}: greeting ${call.greeting_ms === null ? "-" : Math.round(call.greeting_ms)} ms, voice-to-voice ${v2v} ms${early}${stops}, ${verdict}`);
      }
    }),
  );
  const apiLoadResult = load ? await load.stop() : null;
  if (apiLoadResult) progress(`  API load: ${Math.round(apiLoadResult.requests_per_s)} requests/s (p99 ${apiLoadResult.latency_p99_ms} ms, ${apiLoadResult.non_2xx} not 2xx)`);
  clearInterval(sampler);
  clientLoop.disable();
  const wallMs = performance.now() - wallStart;
  const after = serverPid ? processTreeUsage(serverPid) : null;
  const clientCpu = process.cpuUsage(clientBefore);
  const serverCpuMs = before && after ? after.cpuMs - before.cpuMs : null;
  const standinsAfter = pids.standins ? processTreeUsage(pids.standins) : null;
  const standinCpuMs = standinsBefore && standinsAfter ? standinsAfter.cpuMs - standinsBefore.cpuMs : null;
  return {
    protocol,
    endpointing_mode: caller.mode,
    concurrency: level,
    wall_ms: round(wallMs),
    server_cpu_percent: serverCpuMs === null ? null : round((serverCpuMs / wallMs) * 100),
    server_cpu_percent_per_call: serverCpuMs === null ? null : round((serverCpuMs / wallMs / level) * 100),
    server_peak_rss_mb: serverPid ? round(peakRss / 1048576) : null,
    server_rss_mb_per_call: serverPid && before ? round((peakRss - before.rssBytes) / 1048576 / level) : null,
    server_peak_processes: serverPid ? peakProcesses : null,
    client_cpu_percent: round(((clientCpu.user + clientCpu.system) / 1000 / wallMs) * 100),
    client_loop_delay_p99_ms: round(clientLoop.percentile(99) / 1e6),
    standin_cpu_percent: standinCpuMs === null ? null : round((standinCpuMs / wallMs) * 100),
    api_load: apiLoadResult,
    calls,
  };
}

function buildResult(r: {
  started: Date;
  quick: boolean;
  providers: Providers;
  levels: number[];
  protocols: Protocol[];
  modes: EndpointingMode[];
  seed: number;
  conversations: Conversation[];
  baseUrl: string;
  startedServer: boolean;
  levelResults: LevelResult[];
  capacity: CapacityResult[] | null;
}): BenchResult {
  const calls = r.levelResults.flatMap((l) => l.calls);
  return {
    version: 2,
    started_at: r.started.toISOString(),
    finished_at: new Date().toISOString(),
    settings: {
      quick: r.quick,
      concurrency: r.levels,
      protocols: r.protocols,
      endpointing_modes: r.modes,
      endpointing_ms: Object.fromEntries(r.modes.map((m) => [m, BENCH_ENDPOINTING_MS[m]])),
      seed: r.seed,
      arrival_interval_ms: ARRIVAL_INTERVAL_MS,
      providers: r.providers,
      standin_delays_ms: r.providers === "standin" ? { ...DEFAULT_STANDIN_DELAYS } : null,
      target: r.startedServer ? `child process (parley serve, temporary data directory, ${r.providers === "standin" ? "cloud stand-ins" : "embedded engines"})` : r.baseUrl,
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
    modes: r.modes.map((mode) => modeResult(mode, BENCH_ENDPOINTING_MS[mode], calls, r.conversations)),
    levels: r.levelResults.map(({ calls: levelCalls, ...level }) => ({
      ...level,
      calls: levelCalls.length,
      voice_to_voice_ms: summarize(samplesOf(levelCalls, "voice_to_voice_ms")),
      greeting_ms: summarize(samplesOf(levelCalls, "greeting_ms")),
      jitter_ms: summarize(samplesOf(levelCalls, "jitter_ms")),
      false_endpoints: levelCalls.reduce((n, c) => n + c.false_endpoints, 0),
    })),
    calls,
    capacity: r.capacity,
  };
}
