import type { AudioFrame } from "../audio/audio-frame.js";
import type { AsrProvider, AsrResult, AsrSession } from "./asr/asr-provider.js";
import type { ExpectedSpeech } from "./asr/expected-speech.js";
import type { DialogueEvent, DialogueProvider, DialogueSession } from "./llm/dialogue-provider.js";
import { ProviderError, type ProviderStage } from "./provider-error.js";
import type { StageProviders } from "./provider-definition.js";
import type { SpeechChunk, TtsProvider } from "./tts/tts-provider.js";

/** How a provider request ended; an error by its kind. */
export type RequestOutcome = "ok" | "aborted" | "rate_limited" | "server_error" | "no_answer" | "refused" | "failed";

/**
 * One request to one provider, as every provider is measured (the engine wraps each it
 * creates): a dialogue turn, a speech synthesis, an utterance's recognition.
 */
export interface ProviderRequest {
  stage: ProviderStage;
  provider: string;
  /**
   * Until its first output, in ms: the first text or tool event of a turn, the first audio of a
   * synthesis; for recognition, from the end of the utterance's audio to its final (the time a
   * caller waits). Null when none came.
   */
  firstOutputMs: number | null;
  /** From the request to its end, in ms. */
  durationMs: number;
  outcome: RequestOutcome;
}

/** The kind of a provider's failure: the status it answered, or none. */
export function outcomeOf(error: unknown): RequestOutcome {
  if (!(error instanceof ProviderError)) return "failed";
  const status = error.status;
  if (status === 429) return "rate_limited";
  if (status !== null && status >= 500) return "server_error";
  if (status === null && error.retryable) return "no_answer";
  return error.retryable ? "server_error" : "refused";
}

type Report = (request: ProviderRequest) => void;

/**
 * `provider` with each request measured and told to `report`. Optional parts of the contract
 * (a session's checkpoint, judgeTurn, recordTurn) are kept as they are, present or absent.
 */
export function measured<Stage extends ProviderStage>(stage: Stage, provider: StageProviders[Stage], report: Report): StageProviders[Stage] {
  if (stage === "dialogue") return measuredDialogue(provider as DialogueProvider, report) as StageProviders[Stage];
  if (stage === "tts") return measuredTts(provider as TtsProvider, report) as StageProviders[Stage];
  return measuredAsr(provider as AsrProvider, report) as StageProviders[Stage];
}

/** Yields `items`, telling `report` when the first came (or `firstAt()` says) and how it ended. */
async function* measure<T>(stage: ProviderStage, provider: string, items: AsyncIterable<T>, signal: AbortSignal, report: Report, firstAt?: (item: T) => number | undefined): AsyncGenerator<T> {
  const start = performance.now();
  let first: number | null = null;
  let outcome: RequestOutcome = "aborted";
  try {
    for await (const item of items) {
      const at = firstAt ? firstAt(item) : performance.now();
      if (first === null && at !== undefined) first = at - start;
      yield item;
    }
    outcome = signal.aborted ? "aborted" : "ok";
  } catch (error) {
    outcome = signal.aborted ? "aborted" : outcomeOf(error);
    throw error;
  } finally {
    // A consumer that stopped reading (a barge-in) ends here too, as aborted.
    report({ stage, provider, firstOutputMs: first, durationMs: performance.now() - start, outcome });
  }
}

function measuredDialogue(provider: DialogueProvider, report: Report): DialogueProvider {
  return {
    name: provider.name,
    open(options) {
      const session = provider.open(options);
      const wrapped: DialogueSession = {
        respond: (text, signal) => measure<DialogueEvent>("dialogue", provider.name, session.respond(text, signal), signal, report),
        respondToKeys: (digits, signal) => measure<DialogueEvent>("dialogue", provider.name, session.respondToKeys(digits, signal), signal, report),
        truncateLastReply: (heard) => session.truncateLastReply(heard),
      };
      if (session.judgeTurn) wrapped.judgeTurn = session.judgeTurn.bind(session);
      if (session.checkpoint) wrapped.checkpoint = session.checkpoint.bind(session);
      if (session.recordTurn) wrapped.recordTurn = session.recordTurn.bind(session);
      if (session.expectedSpeech) wrapped.expectedSpeech = session.expectedSpeech.bind(session);
      if (session.agentSaid) wrapped.agentSaid = session.agentSaid.bind(session);
      if (session.guide) wrapped.guide = session.guide.bind(session);
      return wrapped;
    },
  };
}

function measuredTts(provider: TtsProvider, report: Report): TtsProvider {
  return {
    name: provider.name,
    voices: () => provider.voices(),
    synthesize: (text, options) => measure<SpeechChunk>("tts", provider.name, provider.synthesize(text, options), options.signal, report),
  };
}

function measuredAsr(provider: AsrProvider, report: Report): AsrProvider {
  return {
    name: provider.name,
    open: async (options) => {
      const session = await provider.open(options);
      return {
        transcribe(audio: AsyncIterable<AudioFrame>, signal: AbortSignal, expected?: ExpectedSpeech): AsyncIterable<AsrResult> {
          let audioEnded: number | undefined;
          const watched = (async function* () {
            yield* audio;
            audioEnded = performance.now();
          })();
          // The wait that matters is the caller's: from the end of their audio to the final.
          const start = performance.now();
          return measure<AsrResult>("asr", provider.name, session.transcribe(watched, signal, expected), signal, report, (result) =>
            result.type === "final" ? start + (performance.now() - (audioEnded ?? performance.now())) : undefined,
          );
        },
        close: () => session.close(),
      } satisfies AsrSession;
    },
    ...(provider.close ? { close: () => provider.close!() } : {}),
  };
}
