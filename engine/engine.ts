import type { LiveCall, LiveCallOptions } from "./live-call.js";
import { CallSession, type CallProviders, type CallSessionOptions } from "./call-session.js";
import type { AsrProvider } from "./providers/asr/asr-provider.js";
import { DeepgramProvider, type DeepgramConfig } from "./providers/asr/deepgram/deepgram-provider.js";
import { PocketsphinxProvider } from "./providers/asr/pocketsphinx/pocketsphinx-provider.js";
import type { DialogueProvider } from "./providers/llm/dialogue-provider.js";
import { OpenAiDialogueProvider, type OpenAiDialogueConfig } from "./providers/llm/openai/openai-dialogue-provider.js";
import { createRulesDialogueProvider } from "./providers/llm/rules/rules-dialogue-provider.js";
import type { ProviderStage } from "./providers/provider-error.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./providers/provider-retry.js";
import { FliteTts } from "./providers/tts/flite-tts.js";
import { FLITE_VOICES } from "./providers/tts/flite-voices.js";
import { OpenAiSpeechTts, type OpenAiSpeechTtsConfig } from "./providers/tts/openai/openai-speech-tts.js";
import { SpeechCache } from "./providers/tts/speech-cache.js";
import type { TtsProvider } from "./providers/tts/tts-provider.js";
import type { VoiceInfo } from "./providers/tts/voice.js";
import { VoiceRouterTts } from "./providers/tts/voice-router-tts.js";
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
  /** Speech recognition: the embedded pocketsphinx (default) or a Deepgram-compatible service. */
  asr?: { provider: "pocketsphinx" } | ({ provider: "deepgram" } & DeepgramConfig);
  /** What every agent model name runs on: the embedded `rules` dialogue (default) or an OpenAI-compatible chat service. */
  dialogue?: { provider: "rules" } | ({ provider: "openai" } & OpenAiDialogueConfig);
  /** A remote speech service whose voices are offered next to Flite's (which are always there). */
  tts?: { provider: "flite" } | ({ provider: "openai" } & OpenAiSpeechTtsConfig);
  /** Told of every retry a remote provider makes (after its retry policy's wait): the control plane counts them. */
  onProviderRetry?: (retry: { stage: ProviderStage; provider: string }) => void;
}

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

export async function createLocalEngine(given: EngineOptions = {}): Promise<LocalEngine> {
  const options = withRetryCounting(given);
  const flite = new FliteTts({ workers: options.ttsWorkers });
  const asr = createAsr(options);
  // Every recognizer loads now: the first callers must not wait for the model (one that cannot
  // load at all is reported by each call that starts, as recognizer_unavailable).
  const [vad] = await Promise.all([createVadFactory(options.vad), flite.start(), asr instanceof PocketsphinxProvider ? asr.warmUp().catch(() => undefined) : undefined]);
  const dialogue: DialogueProvider = options.dialogue?.provider === "openai" ? new OpenAiDialogueProvider(options.dialogue) : createRulesDialogueProvider();
  const remoteTts: TtsProvider[] = options.tts?.provider === "openai" ? [new OpenAiSpeechTts(options.tts)] : [];
  const tts = remoteTts.length ? new VoiceRouterTts([flite, ...remoteTts]) : flite;
  const greetingTts = new SpeechCache(tts);
  // Flite needs no network: it says the fallback line when a remote provider fails a turn.
  const providers: CallProviders = { vad, asr, dialogue, tts, fallbackTts: flite, greetingTts };
  return {
    voices: tts.voices(),
    createCall: (callOptions) => new CallSession({ ...callOptions, providers }),
    prepareGreeting: (agent, context, signal) => greetingTts.prepare(agent.voiceId, greetingSentences(agent, context), signal),
    usage: () => {
      const recognizers = asr instanceof PocketsphinxProvider ? asr.stats() : null;
      const tts = flite.stats();
      return {
        recognizers: recognizers && { inUse: recognizers.leased, capacity: recognizers.max, queued: recognizers.waiting },
        ttsWorkers: { inUse: tts.busy, capacity: tts.workers, queued: tts.queued },
      };
    },
    close: async () => {
      await Promise.allSettled([asr.close?.(), flite.close(), vad.close()]);
    },
  };
}

/** The voices an engine with these options offers, without loading it (the control plane validates agents with them). */
export function engineVoices(options: Pick<EngineOptions, "tts"> = {}): readonly VoiceInfo[] {
  return options.tts?.provider === "openai" ? [...FLITE_VOICES, ...new OpenAiSpeechTts(options.tts).voices()] : FLITE_VOICES;
}

/** The options with each remote provider's retry policy telling `onProviderRetry` of its retries. */
function withRetryCounting(options: EngineOptions): EngineOptions {
  const told = options.onProviderRetry;
  if (!told) return options;
  const counted = (policy: RetryPolicy | undefined, stage: ProviderStage, provider: string): RetryPolicy => {
    const base = policy ?? DEFAULT_RETRY_POLICY;
    return {
      ...base,
      onRetry: (error) => {
        base.onRetry?.(error);
        told({ stage, provider });
      },
    };
  };
  return {
    ...options,
    ...(options.asr?.provider === "deepgram" ? { asr: { ...options.asr, retry: counted(options.asr.retry, "asr", "deepgram") } } : {}),
    ...(options.dialogue?.provider === "openai" ? { dialogue: { ...options.dialogue, retry: counted(options.dialogue.retry, "dialogue", "openai") } } : {}),
    ...(options.tts?.provider === "openai" ? { tts: { ...options.tts, retry: counted(options.tts.retry, "tts", "openai") } } : {}),
  };
}

function createAsr(options: EngineOptions): AsrProvider {
  if (options.asr?.provider === "deepgram") return new DeepgramProvider(options.asr);
  return new PocketsphinxProvider({ maxRecognizers: options.asrRecognizers });
}
