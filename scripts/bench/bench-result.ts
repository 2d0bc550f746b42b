import type { ApiLoadResult } from "./api-load.js";
import type { CapacityResult } from "./capacity.js";
import type { EndpointingMode } from "./conversation.js";
import type { Summary } from "./percentiles.js";
import type { CallResult, Protocol } from "./play-conversation.js";

/** One concurrency level of one protocol in one endpointing mode: resource use and its calls. */
export interface LevelResult {
  protocol: Protocol;
  endpointing_mode: EndpointingMode;
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
  /** What the API load (`--api-load`) achieved while the level's calls ran; null without it. */
  api_load: ApiLoadResult | null;
  calls: CallResult[];
}

/** Latency figures, in report order (see METRIC_LABELS). */
export const METRIC_NAMES = [
  "greeting_ms",
  "voice_to_voice_ms",
  "barge_in_ms",
  "barge_in_stop_ms",
  "jitter_ms",
  "endpointing_wait_ms",
  "asr_ms",
  "first_token_ms",
  "first_tts_audio_ms",
  "first_frame_sent_ms",
  "server_voice_to_voice_ms",
  "pipeline_overhead_ms",
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** Everything measured in one endpointing mode, over all its levels and protocols. */
export interface ModeResult {
  endpointing_mode: EndpointingMode;
  endpointing_ms: number;
  calls: number;
  metrics: Record<MetricName, Summary>;
  /**
   * Agent audio starting while a multi-line `say` step still had lines to play: the agent
   * answered before the caller finished. `steps`: multi-line say steps played; `calls`: calls
   * with at least one; `by_conversation`: the count per conversation that has such steps.
   */
  false_endpoints: { total: number; steps: number; calls: number; by_conversation: Record<string, number> };
  /**
   * Backchannels: caller speech over the agent in conversations that expect no interruption.
   * `false_stops`: the agent stopped (a `clear`, or its audio missing for over 300 ms);
   * `resumes`: of those, how many it picked up again before the caller's next step.
   */
  backchannels: { spoken: number; false_stops: number; resumes: number };
  /** Replies prepared before the caller's turn was over (native calls), and those dropped unheard because the caller went on. */
  early_replies: { prepared: number; wasted: number };
  /** Checked outcomes: `required` ones (the mode is in the conversation's expect_modes) and how many were met; the others apart. */
  outcomes: { required: number; met: number; not_required: number; not_required_met: number };
}

/** The bench.json file. */
export interface BenchResult {
  /** 2: endpointing modes (`modes`, `endpointing_mode` on levels and calls). */
  version: 2;
  started_at: string;
  finished_at: string;
  settings: {
    quick: boolean;
    providers: "embedded" | "standin";
    /** The stand-ins' fixed delays; null with embedded providers. */
    standin_delays_ms: { asrFinalMs: number; llmFirstTokenMs: number; llmTokenMs: number; ttsFirstByteMs: number } | null;
    concurrency: number[];
    protocols: Protocol[];
    /** In the order they ran; each ran every protocol and level with its own agents. */
    endpointing_modes: EndpointingMode[];
    /** The agents' `endpointing_ms` per mode run. */
    endpointing_ms: Partial<Record<EndpointingMode, number>>;
    seed: number;
    /** Calls of a level start this far apart. */
    arrival_interval_ms: number;
    target: string;
    conversations: string[];
    fixture_lines: string[];
  };
  machine: { platform: string; arch: string; cpus: number; cpu_model: string; memory_gb: number; node: string };
  /** One per endpointing mode, in `settings.endpointing_modes` order. */
  modes: ModeResult[];
  levels: Array<
    Omit<LevelResult, "calls"> & { calls: number; voice_to_voice_ms: Summary; greeting_ms: Summary; jitter_ms: Summary; false_endpoints: number }
  >;
  calls: CallResult[];
  /** `--find-capacity`: one search per protocol and endpointing mode, in the order run; null (or absent) without it. */
  capacity?: CapacityResult[] | null;
}
