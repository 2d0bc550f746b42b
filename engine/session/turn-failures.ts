import type { CallEvent } from "../call-events.js";
import { isRetryable, ProviderError } from "../providers/provider-error.js";
import type { AgentTurn } from "./agent-turn.js";

/** Said in the fallback voice when the dialogue or the TTS failed a reply. */
export const REPLY_FALLBACK_LINE = "Sorry, I'm having trouble hearing you right now. Could you say that again?";
/** Said in the fallback voice when the recognizer failed the caller's words. */
export const ASR_FALLBACK_LINE = "Sorry, could you repeat that?";
/** Failed turns in a row that end the call: a provider that stays down must not keep the caller in a loop of apologies. */
export const MAX_FAILED_TURNS = 3;

export type ErrorEvent = Extract<CallEvent, { type: "error" }>;

/** The agent turn as the failure rules see it. */
export type FailedTurn = Pick<AgentTurn, "kind" | "textComplete" | "abort">;

/**
 * What follows a provider failing an agent turn: `ended` (the call has been ended);
 * `say_rest` (the turn's text is known: the fallback voice says its unheard rest, and what the
 * turn decided still happens); `apologise` (REPLY_FALLBACK_LINE in the fallback voice).
 */
export type ReplyFailure = "ended" | "say_rest" | "apologise";

/** What the failure rules tell the call they belong to. */
export interface TurnFailuresHost {
  /** A failure the call goes on after (`recovered: true`). */
  report(event: ErrorEvent): void;
  /** A failure the call does not survive: it ends with `error`. */
  fail(err: unknown): void;
}

/**
 * The rules for a provider failing a turn: which failures the call survives (a retryable
 * provider error, fewer than MAX_FAILED_TURNS turns in a row), what the caller then hears,
 * and the error event, naming the provider that failed.
 */
export class TurnFailures {
  /** Turns in a row that a provider failed; a reply the providers delivered in full starts the count again. */
  private failedTurns = 0;

  constructor(
    /** The call's providers, named in error events (AsrError is shared by the recognizers: this call's is named). */
    private readonly providers: Record<"asr" | "dialogue" | "tts", { readonly name: string }>,
    private readonly host: TurnFailuresHost,
  ) {}

  /** All of `turn`'s audio is queued: a reply the providers delivered in full starts the count again. */
  synthesized(turn: FailedTurn): void {
    if (turn.kind === "reply" && !turn.abort.signal.aborted) this.failedTurns = 0;
  }

  /** The dialogue or the TTS failed `turn` (after the provider's own retries): what follows. */
  replyFailed(turn: FailedTurn, err: unknown): ReplyFailure {
    // The fallback voice failing as well leaves nothing to speak with.
    if (turn.kind === "fallback") {
      this.host.fail(err);
      return "ended";
    }
    if (!this.survives(err)) return "ended";
    return turn.textComplete ? "say_rest" : "apologise";
  }

  /**
   * The recognizer failed words the caller said over the agent, who goes on: no turn was lost,
   * so a retryable error is reported and not counted; any other ends the call.
   */
  overAgent(err: unknown): void {
    if (isRetryable(err)) this.host.report(this.errorEvent(err, true));
    else this.host.fail(err);
  }

  /**
   * Counts a turn a provider failed: true when the call goes on (the error is reported as
   * recovered), false when it has been ended. Only a provider's retryable error (ASR, chat
   * completions, speech, Flite: all extend ProviderError) is survived, fewer than
   * MAX_FAILED_TURNS in a row: the provider has retried what it could, and the next turn tries
   * afresh. A non-retryable provider error (refused key, unknown model or voice) would fail
   * every turn the same way, and any other error is a bug or a transport failure: those end
   * the call.
   */
  survives(err: unknown): boolean {
    if (!isRetryable(err) || ++this.failedTurns >= MAX_FAILED_TURNS) {
      this.host.fail(err);
      return false;
    }
    this.host.report(this.errorEvent(err, true));
    return true;
  }

  /** The error event for `err`, naming the provider when one failed. */
  errorEvent(err: unknown, recovered: boolean): ErrorEvent {
    const message = err instanceof Error ? err.message : String(err);
    if (!(err instanceof ProviderError) || err.stage === null) return { type: "error", message, recovered };
    const name = err.provider ?? this.providers[err.stage].name;
    return { type: "error", message, recovered, provider: { stage: err.stage, name } };
  }
}
