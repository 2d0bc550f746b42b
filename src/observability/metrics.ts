import type { StorageTarget } from "../core/storage-target.js";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { FastHistogram } from "./fast-histogram.js";
import { turnLatency, type CallEvent, type EngineUsage, type ProviderStage, type ProviderRequest, type ProviderSwitch, type TurnMetrics } from "../../engine/index.js";

/** The turn stages timed per agent turn, in pipeline order (label `stage` of parley_turn_latency_seconds). */
export const TURN_STAGES = ["endpointing", "asr", "first_token", "first_audio", "voice_to_voice"] as const;
export type TurnStage = (typeof TURN_STAGES)[number];

/** The shared resources whose use is gauged (label `pool`). */
export const POOLS = ["recognizers", "tts_workers", "call_slots"] as const;
export type Pool = (typeof POOLS)[number];

/** How one webhook attempt went (label `result` of parley_webhook_attempts_total). */
export type WebhookAttemptResult = "success" | "http_error" | "no_response" | "not_sent";

/** The route label of a request that matched no route: one fixed value, never the raw URL. */
export const UNMATCHED_ROUTE = "unmatched";

/** Turn stage latencies: 50 ms to 10 s (a voice-to-voice under 1 s is the aim). */
const TURN_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
/** API request durations: 1 ms to 5 s. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** From an event to its delivery: sub-second when the receiver answers, up to the retry schedule's hours. */
const WEBHOOK_DELAY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];

/**
 * Every Prometheus metric the service exposes at `GET /metrics`, in its own registry (not
 * prom-client's global one: several services in one process, as in the tests, keep apart).
 * Created once per service container; the parts that count things get it from there and call
 * the small recording methods below, so label names and values are decided here, bounded (no
 * ids, numbers or URLs). Names follow Prometheus conventions: `parley_` prefix, `_total` for
 * counters, base units (`_seconds`).
 */
export class ParleyMetrics {
  readonly registry = new Registry();

  private readonly callsLive = new Gauge({ name: "parley_calls_live", help: "Calls running on the engine now, by media transport", labelNames: ["transport"] as const, registers: [this.registry] });
  private readonly callsStarted = new Counter({ name: "parley_calls_started_total", help: "Calls whose media started on the engine, by media transport", labelNames: ["transport"] as const, registers: [this.registry] });
  private readonly callsEnded = new Counter({
    name: "parley_calls_ended_total",
    help: "Calls that ran on the engine and ended, by media transport and stored status (completed, transferred, failed)",
    labelNames: ["transport", "status"] as const,
    registers: [this.registry],
  });
  private readonly dials = new Counter({
    name: "parley_outbound_dials_total",
    help: "Outbound calls dialled, by carrier and outcome (answered, busy, no_answer, failed)",
    labelNames: ["carrier", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly turnLatency = new Histogram({
    name: "parley_turn_latency_seconds",
    help: "Agent turns answering caller speech: time from the end of the caller's speech to each stage (endpointing, asr, first_token, first_audio, voice_to_voice)",
    labelNames: ["stage"] as const,
    buckets: TURN_BUCKETS,
    registers: [this.registry],
  });
  private readonly bargeIns = new Counter({ name: "parley_barge_ins_total", help: "Agent turns the caller cut short by speaking over them, by media transport", labelNames: ["transport"] as const, registers: [this.registry] });
  private readonly providerErrors = new Counter({
    name: "parley_provider_errors_total",
    help: "Speech and language provider failures a call saw, by stage, provider and whether the call went on (recovered)",
    labelNames: ["stage", "provider", "recovered"] as const,
    registers: [this.registry],
  });
  private readonly providerRetries = new Counter({
    name: "parley_provider_retries_total",
    help: "Requests to remote providers tried again after a retryable failure, by stage and provider",
    labelNames: ["stage", "provider"] as const,
    registers: [this.registry],
  });
  private readonly providerSwitches = new Counter({
    name: "parley_provider_switches_total",
    help: "Requests a chain's next provider served because the one before failed (after its retries) or gave no first output in time, by stage, from, to and reason",
    labelNames: ["stage", "from", "to", "reason"] as const,
    registers: [this.registry],
  });
  private readonly providerRequests = new Counter({
    name: "parley_provider_requests_total",
    help: "Requests to speech and language providers (dialogue turns, syntheses, utterances recognized) by stage, provider and outcome (ok, aborted, rate_limited, server_error, no_answer, refused, failed)",
    labelNames: ["stage", "provider", "outcome"] as const,
    registers: [this.registry],
  });
  private readonly providerFirstOutput = new Histogram({
    name: "parley_provider_first_output_seconds",
    help: "Time from a provider request to its first output: a turn's first token, a synthesis's first audio, an utterance's final after its audio ended",
    labelNames: ["stage", "provider"] as const,
    buckets: TURN_BUCKETS,
    registers: [this.registry],
  });
  private readonly providerDuration = new Histogram({
    name: "parley_provider_request_duration_seconds",
    help: "Time from a provider request to its end (its whole reply, audio or recognition), by stage and provider",
    labelNames: ["stage", "provider"] as const,
    buckets: TURN_BUCKETS,
    registers: [this.registry],
  });
  private readonly webhookAttempts = new Counter({
    name: "parley_webhook_attempts_total",
    help: "Webhook delivery attempts by result (success: 2xx; http_error: another status; no_response: timeout or connection failure; not_sent: target refused or webhook gone)",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  private readonly webhookDeliveries = new Counter({
    name: "parley_webhook_deliveries_total",
    help: "Webhook deliveries that reached a final state, by outcome (delivered, failed, skipped)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  private readonly webhookDelay = new Histogram({
    name: "parley_webhook_delivery_delay_seconds",
    help: "Time from an event to its successful delivery (retries included)",
    buckets: WEBHOOK_DELAY_BUCKETS,
    registers: [this.registry],
  });
  private readonly campaignCalls = new Counter({ name: "parley_campaign_calls_queued_total", help: "Calls the campaign runner queued for its contacts", registers: [this.registry] });
  /** On every request's path: prom-client's own histogram costs about a microsecond per observation, this one a Map lookup. */
  private readonly http = new FastHistogram({
    name: "parley_http_request_duration_seconds",
    help: "HTTP requests by method, route template (unmatched for none) and status, with their duration",
    labelNames: ["method", "route", "status"] as const,
    buckets: HTTP_BUCKETS,
  });
  /** Reads the pools' owners at scrape time (see watchEngine, watchCallSlots). */
  private readonly poolReaders: Array<() => void> = [];
  private readonly readPools = (): void => {
    for (const read of this.poolReaders) read();
  };
  private readonly poolInUse = new Gauge({
    name: "parley_pool_in_use",
    help: "Shared engine resources in use now, by pool (recognizers, tts_workers, call_slots)",
    labelNames: ["pool"] as const,
    registers: [this.registry],
    collect: this.readPools,
  });
  private readonly poolCapacity = new Gauge({
    name: "parley_pool_capacity",
    help: "Size of each shared engine resource pool (absent: no limit)",
    labelNames: ["pool"] as const,
    registers: [this.registry],
    collect: this.readPools,
  });
  private readonly ttsQueue = new Gauge({ name: "parley_tts_queue_length", help: "Utterances waiting for a Flite worker", registers: [this.registry], collect: this.readPools });
  private readonly recognizerQueue = new Gauge({
    name: "parley_recognizer_queue_length",
    help: "Callers' speech waiting for an embedded recognizer",
    registers: [this.registry],
    collect: this.readPools,
  });

  constructor() {
    this.registry.registerMetric(this.http.asMetric());
    // Known, bounded series start at 0, so a dashboard shows 0 rather than "no data".
    for (const outcome of ["delivered", "failed", "skipped"]) this.webhookDeliveries.inc({ outcome }, 0);
    this.campaignCalls.inc(0);
    // Event-loop lag (nodejs_eventloop_lag_*), heap, GC, CPU, open handles: prom-client's defaults, in this registry.
    collectDefaultMetrics({ register: this.registry });
  }

  /** The exposition (text format 0.0.4) and its content type. */
  async expose(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** One HTTP request: `route` is the matched route template, or UNMATCHED_ROUTE. */
  observeHttp(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    if (this.http.observe(key, seconds)) return;
    this.http.add(key, { method, route, status: String(status) });
    this.http.observe(key, seconds);
  }

  /** A call's media started on `transport` (native, twilio, sip, simulator). */
  callStarted(transport: string): void {
    this.callsStarted.inc({ transport });
    this.callsLive.inc({ transport });
  }

  /** That call ended with its stored status. */
  callEnded(transport: string, status: string): void {
    this.callsEnded.inc({ transport, status });
    this.callsLive.dec({ transport });
  }

  /** An outbound dial's outcome at the carrier. */
  dialled(carrier: string, outcome: "answered" | "busy" | "no_answer" | "failed"): void {
    this.dials.inc({ carrier, outcome });
  }

  /** Counts what a live call reports: turn latencies, barge-ins, provider failures. */
  callEvent(transport: string, event: CallEvent): void {
    if (event.type === "turn_metrics") this.turn(event.metrics);
    else if (event.type === "interruption") this.bargeIns.inc({ transport });
    else if (event.type === "error" && event.provider) {
      this.providerErrors.inc({ stage: event.provider.stage, provider: event.provider.name, recovered: String(event.recovered) });
    }
  }

  /** A remote provider's retry (wired to the engine's `onProviderRetry`). */
  readonly providerRetry = (retry: { stage: ProviderStage; provider: string }): void => {
    this.providerRetries.inc({ stage: retry.stage, provider: retry.provider });
  };

  /** A request a provider chain moved on (wired to the engine's `onProviderSwitch`). */
  readonly providerSwitch = (change: ProviderSwitch): void => {
    this.providerSwitches.inc({ stage: change.stage, from: change.from, to: change.to, reason: change.reason });
  };

  /** One request to a provider (wired to the engine's `onProviderRequest`). */
  readonly providerRequest = (request: ProviderRequest): void => {
    const labels = { stage: request.stage, provider: request.provider };
    this.providerRequests.inc({ ...labels, outcome: request.outcome });
    if (request.firstOutputMs !== null) this.providerFirstOutput.observe(labels, request.firstOutputMs / 1000);
    this.providerDuration.observe(labels, request.durationMs / 1000);
  };

  /** One webhook attempt's result; with its final state when it has one, and the event's age when delivered. */
  webhookAttempt(result: WebhookAttemptResult, final: "delivered" | "failed" | "skipped" | null, eventAgeSeconds: number | null): void {
    this.webhookAttempts.inc({ result });
    if (final) this.webhookDeliveries.inc({ outcome: final });
    if (final === "delivered" && eventAgeSeconds !== null) this.webhookDelay.observe(Math.max(0, eventAgeSeconds));
  }

  /** The campaign runner queued a call for a contact. */
  campaignCallQueued(): void {
    this.campaignCalls.inc();
  }

  /** Counts the failed writes to disk (full or failing) by target from StorageHealth at every scrape. */
  watchStorage(counts: () => Record<StorageTarget, number>): void {
    new Counter({
      name: "parley_storage_failures_total",
      help: "Failed writes to disk by target (recording, database): a full or failing disk",
      labelNames: ["target"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [target, failures] of Object.entries(counts())) this.inc({ target }, failures);
      },
    });
  }

  /** Gauges the engine's pools (recognizers, TTS workers) from `usage()` at every scrape. */
  watchEngine(usage: () => EngineUsage): void {
    this.poolReaders.push(() => {
      const { recognizers, ttsWorkers } = usage();
      if (recognizers) {
        this.pool("recognizers", recognizers.inUse, recognizers.capacity);
        this.recognizerQueue.set(recognizers.queued);
      }
      this.pool("tts_workers", ttsWorkers.inUse, ttsWorkers.capacity);
      this.ttsQueue.set(ttsWorkers.queued);
    });
  }

  /** Gauges the box's call slots (held by calls being admitted, ringing or running) at every scrape. */
  watchCallSlots(held: () => number, capacity: number): void {
    this.poolReaders.push(() => this.pool("call_slots", held(), capacity));
  }

  /**
   * Gauges campaign progress at every scrape: contacts of the campaigns not yet over
   * (scheduled, running, paused) by contact status, read by `count`.
   */
  watchCampaignContacts(count: () => Promise<Record<string, number>>): void {
    new Gauge({
      name: "parley_campaign_contacts",
      help: "Contacts of scheduled, running and paused campaigns, by contact status",
      labelNames: ["status"] as const,
      registers: [this.registry],
      async collect() {
        const counts = await count();
        this.reset();
        for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
      },
    });
  }

  private pool(pool: Pool, inUse: number, capacity: number): void {
    this.poolInUse.set({ pool }, inUse);
    this.poolCapacity.set({ pool }, capacity);
  }

  private turn(metrics: TurnMetrics): void {
    // As the call's latency record counts them (callLatency): turns that answer caller speech and were heard or cut short.
    if (metrics.endOfSpeechAt === null || (metrics.firstFrameSentAt === null && !metrics.interrupted)) return;
    const t = turnLatency(metrics, 0);
    const stages: Record<TurnStage, number | null> = {
      endpointing: t.endpoint_ms,
      asr: t.asr_final_ms,
      first_token: t.first_token_ms,
      first_audio: t.first_audio_ms,
      voice_to_voice: t.voice_to_voice_ms,
    };
    for (const stage of TURN_STAGES) {
      const ms = stages[stage];
      if (ms !== null) this.turnLatency.observe({ stage }, ms / 1000);
    }
  }
}
