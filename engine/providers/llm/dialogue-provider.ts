import type { TranscriptSegment } from "../../call-events.js";
import type { Handoff, ToolExecutor } from "../../tools.js";
import type { ExpectedSpeech } from "../asr/expected-speech.js";
import type { TurnCompleteness } from "../../turn/turn-completeness.js";
import type { AgentSettings } from "../../types.js";

/** What a dialogue turn streams back, in order. */
export type DialogueEvent =
  /** Reply text, in pieces as they come (tokens or whole sentences). */
  | { type: "text"; text: string }
  /** Hand the caller to a human (after the reply text has been spoken). */
  | { type: "transfer" }
  /** End the call (after the reply text has been spoken). */
  | { type: "end_call"; reason: string }
  /** Pass the caller to another agent (after the reply text has been spoken). */
  | { type: "handoff"; handoff: Handoff }
  /** The reply answers the caller's question (for the call's analysis: information was given). */
  /** `passage_id`: the knowledge-base passage the answer came from (absent for an FAQ answer). */
  | { type: "answered_question"; question: string; passage_id?: string }
  /** The caller asked to be called back, at this day (YYYY-MM-DD) and time (HH:MM) when they said one. */
  | { type: "callback_requested"; date: string | null; time: string | null };

/**
 * One call's conversation state. `respond` runs one agent turn for the caller's words and
 * streams the reply; aborting the signal abandons the turn.
 */
export interface DialogueSession {
  respond(userText: string, signal: AbortSignal): AsyncIterable<DialogueEvent>;
  /**
   * One agent turn for keys the caller pressed on their phone (`0`-`9`, `*`; an entry ends
   * after a pause or `#`, which is not included): an answer ("1" for yes), a number, or "0"
   * for a person.
   */
  respondToKeys(digits: string, signal: AbortSignal): AsyncIterable<DialogueEvent>;
  /**
   * After a barge-in: the caller heard only `heardText` of the last reply. The session keeps
   * that, not the full reply, as what the agent said.
   */
  truncateLastReply(heardText: string): void;
  /**
   * The agent said `text` of its own accord, not as a reply (a supervisor's line, as far as the
   * caller heard it): kept in the conversation as the agent's words, so the next reply knows it
   * was said. Never truncated afterwards (the session passes only what was heard). Absent: the
   * dialogue keeps no history of the agent's words (as the rules dialogue, which ignores it).
   */
  agentSaid?(text: string): void;
  /**
   * A supervisor's guidance for the agent's next replies (never spoken, never shown to the
   * caller): followed for the rest of the call. Absent: the dialogue cannot follow free text.
   */
  guide?(text: string): void;
  /**
   * Whether the caller's words so far make a whole turn in this conversation (adaptive
   * endpointing answers a complete turn at once and waits for the rest of an incomplete one).
   * Must not change the conversation. Absent: the transcript alone decides
   * (`transcriptCompleteness`).
   */
  judgeTurn?(text: string): TurnCompleteness;
  /**
   * A way back to the conversation as it is now: calling the returned function puts it back,
   * as if no reply had been asked for since. The call session prepares a reply early (before
   * the caller's turn is over) only with a dialogue that has this, and withdraws the reply this
   * way when the caller goes on. Absent: no early replies (a remote model would bill them).
   */
  checkpoint?(): () => void;
  /**
   * A turn another provider of the chain answered (see FallbackDialogueProvider): the session
   * keeps the caller's words (or keys) and the reply as if it had answered them, so it can take
   * the next turn (and a barge-in's truncation finds the reply). Absent: the session keeps no history of its own worth keeping in step.
   */
  recordTurn?(caller: CallerTurn, reply: string): void;
  /**
   * What the agent's last question asked for (a day and time, a name, yes or no...), which the
   * recognizer may listen for in the caller's next words; null when anything may come. Absent:
   * the dialogue does not know (a remote model's free text).
   */
  expectedSpeech?(): ExpectedSpeech | null;
}

/** What the caller did in a turn: spoke (the transcript) or pressed keys. */
export type CallerTurn = { words: string } | { keys: string };

export interface DialogueOpenOptions {
  agent: AgentSettings;
  context: Record<string, unknown>;
  tools: ToolExecutor;
  history?: readonly TranscriptSegment[];
}

export interface DialogueProvider {
  readonly name: string;
  /**
   * `tools`: what the agent may do on this call, run by the control plane; a turn that uses one
   * waits for its result before saying what happened. `history`: the conversation so far when
   * the agent takes over a call from another (a hand-off); absent at the start of a call.
   */
  open(options: DialogueOpenOptions): DialogueSession;
}
