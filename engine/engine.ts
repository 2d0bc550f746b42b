import type { LiveCall, LiveCallOptions } from "./live-call.js";
import { CallSession, type CallProviders, type CallSessionOptions } from "./call-session.js";
import { FallbackAsrProvider } from "./providers/asr/fallback-asr.js";
import { PocketsphinxProvider } from "./providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { FallbackDialogueProvider } from "./providers/llm/fallback-dialogue.js";
import { ProviderChain, type ProviderSwitch } from "./providers/provider-chain.js";
import { measured, type ProviderRequest } from "./providers/provider-measurement.js";
import type { ProviderContext, StageProviders } from "./providers/provider-definition.js";
import type { ProviderStage } from "./providers/provider-error.js";
import { createProvider, findProvider, type ProviderChoice } from "./providers/provider-registry.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./providers/provider-retry.js";
import { FallbackTts } from "./providers/tts/fallback-tts.js";
import { FliteTts } from "./providers/tts/flite/flite-tts.js";
import { SpeechCache } from "./providers/tts/speech-cache.js";
import type { VoiceInfo } from "./providers/tts/voice.js";
import { greetingSentences } from "./text/greeting.js";
import type { AgentSettings } from "./types.js";
import { createVadFactory, type VadName } from "./vad/vad-factory.js";

export interface EngineOptions {
  /** `silero` (default) or `webrtc`. */
  vad?: VadName;
  /** Calls the engine carries at once; default from the cores and the recognizer in use (`defaultCallCapacity`). */
  callCapacity?: number;
  /** Threads that run calls (each with its own providers); default one per core. */
  sessionWorkers?: number;
  /** Pocketsphinx recognizer processes (each ~100 MB, leased while a caller speaks); default from cores and memory. All load at start-up. */
  asrRecognizers?: number;
  /** Flite worker threads (warmed up at start); default one per core, at least two. */
  ttsWorkers?: number;
  /**
   * Per stage, the providers of the registry (provider-registry.ts) in the order they are tried
   * (see ProviderChain). Defaults: the embedded pocketsphinx recognizer and `rules` dialogue.
   */
  asr?: ProviderChoice[];
  /** What every agent model name runs on (each provider maps the names to its own models). */
  dialogue?: ProviderChoice[];
  /** Speech synthesis: every provider's voices are offered; Flite's always are, and Flite says the fallback line. */
  tts?: ProviderChoice[];
  /** Told of every retry a remote provider makes (after its retry policy's wait): the control plane counts them. */
  onProviderRetry?: (retry: { stage: ProviderStage; provider: string }) => void;
  /** Told of every request a chain's next provider served instead: the control plane logs and counts them. */
  onProviderSwitch?: (change: ProviderSwitch) => void;
  /** Told of every request to a provider (its time to first output, duration and outcome): the control plane's metrics. */
  onProviderRequest?: (request: ProviderRequest) => void;
}

const DEFAULT_CHAINS: Record<ProviderStage, ProviderChoice[]> = { asr: [{ provider: "pocketsphinx" }], dialogue: [{ provider: "rules" }], tts: [{ provider: "flite" }] };

/** What the engine's shared resources are doing now (the control plane's pool gauges read it). */
export interface EngineUsage {
  /** Embedded recognizers decoding speech now, of `capacity`, and utterances waiting for one; null with a remote recognizer (no pool). */
  recognizers: { inUse: number; capacity: number; queued: number } | null;
  /** Flite worker threads rendering now, of `capacity`, and utterances waiting for one. */
  ttsWorkers: { inUse: number; capacity: number; queued: number };
}

/**
 * The engine the control plane holds: calls run on session workers (see SessionWorkerPool),
 * each with its own providers; this thread keeps the media sockets and the tools.
 */
export interface Engine {
  readonly voices: readonly VoiceInfo[];
  /**
   * Most calls the engine carries at once (`callCapacity`). The engine does not enforce it:
   * the control plane admits calls against it, so a call past it is refused before it starts.
   */
  readonly capacity: number;
  /** A new call (not started: call `start()`). */
  createCall(options: LiveCallOptions): LiveCall;
  /**
   * Renders the agent's greeting for a call with `context` ahead of time (an outbound call
   * while it rings), so the call says it at once; resolves once it is kept. Greetings are kept
   * per voice and sentence as calls say them, so an agent's calls after its first start at once
   * anyway; this is for the first, and for greetings with placeholders. With `callId`, the
   * call of that id later runs where its greeting was rendered.
   */
  prepareGreeting(agent: AgentSettings, context: Record<string, unknown>, signal: AbortSignal, callId?: string): Promise<void>;
  /** The recognizer pools' and the TTS workers' use now (as last reported by the session workers). */
  usage(): EngineUsage;
  /** The threads that run calls. */
  readonly workers: SessionWorkers;
  /** Ends the session workers and their providers; live calls should be stopped first. */
  close(): Promise<void>;
}

/** The session worker threads, for operations and tests. */
export interface SessionWorkers {
  /** The thread ids of the workers running now. */
  readonly threadIds: number[];
  /** The thread that runs `callId`, while it is live. */
  threadOf(callId: string): number | undefined;
  /** Ends one worker at once, as a crash would: its calls end (`error`), a new worker takes its place. */
  terminate(threadId: number): Promise<void>;
}

/**
 * The providers loaded in one thread (VAD model, recognizer pool, TTS workers, dialogue) and
 * the calls run on them: what each session worker holds. `createLocalEngine` loads them.
 */
export interface LocalEngine {
  readonly voices: readonly VoiceInfo[];
  /** A new call session on this thread (not started: call `start()`). */
  createCall(options: Omit<CallSessionOptions, "providers">): CallSession;
  prepareGreeting(agent: AgentSettings, context: Record<string, unknown>, signal: AbortSignal): Promise<void>;
  usage(): EngineUsage;
  /** Releases every provider; live calls should be stopped first. */
  close(): Promise<void>;
}

export async function createLocalEngine(options: EngineOptions = {}): Promise<LocalEngine> {
  const create = providerFactory(options);
  const asrLinks = create("asr");
  const ttsLinks = create("tts");
  // Flite is always there: its voices are offered, and it says the fallback line when a remote provider fails a turn.
  const flite = ttsLinks.find((link): link is FliteTts => link instanceof FliteTts) ?? (createProvider("tts", { provider: "flite" }, providerContext(options, "tts", "flite")) as FliteTts);
  const recognizers = asrLinks.filter((link): link is PocketsphinxProvider => link instanceof PocketsphinxProvider);
  const report = options.onProviderRequest;
  const watched = <Stage extends ProviderStage>(stage: Stage, links: Array<StageProviders[Stage]>) => (report ? links.map((link) => measured(stage, link, report)) : links);
  const asr = chainOf("asr", watched("asr", asrLinks), options, (chain) => new FallbackAsrProvider(chain));
  const dialogue = chainOf("dialogue", watched("dialogue", create("dialogue")), options, (chain) => new FallbackDialogueProvider(chain));
  const speakers = ttsLinks.includes(flite) ? ttsLinks : [...ttsLinks, flite];
  const tts = chainOf("tts", watched("tts", speakers), options, (chain) => new FallbackTts(chain));
  // Every recognizer loads now: the first callers must not wait for the model (one that cannot
  // load at all is reported by each call that starts, as recognizer_unavailable).
  const [vad] = await Promise.all([createVadFactory(options.vad), flite.start(), ...recognizers.map((r) => r.warmUp().catch(() => undefined))]);
  const greetingTts = new SpeechCache(tts);
  const providers: CallProviders = { vad, asr, dialogue, tts, fallbackTts: flite, greetingTts };
  return {
    voices: tts.voices(),
    createCall: (callOptions) => new CallSession({ ...callOptions, providers }),
    prepareGreeting: (agent, context, signal) => greetingTts.prepare(agent.voiceId, greetingSentences(agent, context), signal),
    usage: () => {
      const pooled = recognizers[0]?.stats();
      const tts = flite.stats();
      return {
        recognizers: pooled ? { inUse: pooled.leased, capacity: pooled.max, queued: pooled.waiting } : null,
        ttsWorkers: { inUse: tts.busy, capacity: tts.workers, queued: tts.queued },
      };
    },
    close: async () => {
      await Promise.allSettled([asr.close?.(), ...speakers.map((link) => link.close?.()), vad.close()]);
    },
  };
}

/** The voices an engine with these options offers, without loading it (the control plane validates agents with them). */
export function engineVoices(options: Pick<EngineOptions, "tts"> = {}): readonly VoiceInfo[] {
  const create = providerFactory(options);
  const links = create("tts");
  return links.some((link) => link instanceof FliteTts) ? links.flatMap((link) => link.voices()) : [...links, new FliteTts()].flatMap((link) => link.voices());
}

/** Whether the first recognizer of `options` runs outside Parley (the default call capacity is higher then). */
export function remoteRecognizer(options: Pick<EngineOptions, "asr">): boolean {
  const first = (options.asr ?? DEFAULT_CHAINS.asr)[0]!;
  return findProvider("asr", first.provider)?.remote ?? false;
}

/** Creates the configured providers of a stage, in order. */
function providerFactory(options: EngineOptions) {
  return <Stage extends ProviderStage>(stage: Stage): Array<StageProviders[Stage]> => {
    const choices = options[stage]?.length ? options[stage]! : DEFAULT_CHAINS[stage];
    return choices.map((choice) => createProvider(stage, choice, providerContext(options, stage, choice.provider)));
  };
}

/** One provider alone, or its chain behind `wrap`. */
function chainOf<P extends { readonly name: string }>(stage: ProviderStage, links: P[], options: EngineOptions, wrap: (chain: ProviderChain<P>) => P): P {
  if (links.length === 1) return links[0]!;
  // A recognizer's first result may come only once a long utterance ends: its own timeouts serve.
  return wrap(new ProviderChain(stage, links, { onSwitch: options.onProviderSwitch, ...(stage === "asr" ? { firstOutputTimeoutMs: 0 } : {}) }));
}

/** What a provider is created with: the retry policy telling `onProviderRetry` of its retries, and this thread's share of the embedded engines. */
function providerContext(options: EngineOptions, stage: ProviderStage, provider: string): ProviderContext {
  const told = options.onProviderRetry;
  const retry: RetryPolicy = told ? { ...DEFAULT_RETRY_POLICY, onRetry: () => told({ stage, provider }) } : DEFAULT_RETRY_POLICY;
  return { retry, embedded: { recognizers: options.asrRecognizers, ttsWorkers: options.ttsWorkers } };
}
