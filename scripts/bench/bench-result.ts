import type { Summary } from "./percentiles.js";
import type { CallResult, Protocol } from "./play-conversation.js";

/** One concurrency level of one protocol: resource use and its calls. */
export interface LevelResult {
  protocol: Protocol;
  concurrency: number;
  wall_ms: number;
  /** CPU of the server process tree (service + recognizer processes), % of one core. Null against --url. */
  server_cpu_percent: number | null;
  server_cpu_percent_per_call: number | null;
  server_peak_rss_mb: number | null;
  /** Peak resident memory above the idle server, per call. */
  server_rss_mb_per_call: number | null;
  server_peak_processes: number | null;
  /** The benchmark client's own CPU (this process), % of one core. */
  client_cpu_percent: number;
  /** 99th percentile of the client's event-loop delay: large values mean arrival times partly measure the client. */
  client_loop_delay_p99_ms: number;
  /** The cloud stand-ins' process, % of one core; null with embedded providers. */
  standin_cpu_percent: number | null;
  calls: CallResult[];
}

export type MetricName =
  | "greeting_ms"
  | "voice_to_voice_ms"
  | "barge_in_ms"
  | "jitter_ms"
  | "endpointing_wait_ms"
  | "asr_ms"
  | "first_token_ms"
  | "first_tts_audio_ms"
  | "first_frame_sent_ms"
  | "server_voice_to_voice_ms"
  | "pipeline_overhead_ms";

/** The bench.json file. */
export interface BenchResult {
  version: 1;
  started_at: string;
  finished_at: string;
  settings: {
    quick: boolean;
    providers: "embedded" | "standin";
    /** The stand-ins' fixed delays; null with embedded providers. */
    standin_delays_ms: { asrFinalMs: number; llmFirstTokenMs: number; llmTokenMs: number; ttsFirstByteMs: number } | null;
    concurrency: number[];
    protocols: Protocol[];
    seed: number;
    /** Calls of a level start this far apart. */
    arrival_interval_ms: number;
    target: string;
    endpointing_ms: number;
    conversations: string[];
    fixture_lines: string[];
  };
  machine: { platform: string; arch: string; cpus: number; cpu_model: string; memory_gb: number; node: string };
  /** Over every call of every level and protocol. */
  metrics: Record<MetricName, Summary>;
  levels: Array<
    Omit<LevelResult, "calls"> & { calls: number; voice_to_voice_ms: Summary; greeting_ms: Summary; jitter_ms: Summary }
  >;
  calls: CallResult[];
}
