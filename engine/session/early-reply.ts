import type { CallAction, CallEvent } from "../call-events.js";
import type { AgentPlayout } from "../playout/agent-playout.js";
import type { AgentTurn } from "./agent-turn.js";

/**
 * The reply prepared, unheard, for the caller's words so far while their turn may still go on
 * (adaptive endpointing): the dialogue's text and the first audio are ready when the turn ends
 * with those words. One at a time. `U` is the session's caller turn (compared by identity).
 */
export class EarlyReply<U> {
  private pending: { turn: AgentTurn; words: string; utterance: U; restore: () => void } | undefined;

  constructor(
    private readonly playout: AgentPlayout<AgentTurn>,
    /** Reports `early_reply` with `used: false` when a reply is dropped (the session reports it used). */
    private readonly report: (event: Extract<CallEvent, { type: "early_reply" }>) => void,
  ) {}

  /** The early reply being prepared, if any. */
  get turn(): AgentTurn | undefined {
    return this.pending?.turn;
  }

  /**
   * Holds `turn` as the reply to `words` of `utterance`: its audio paused and its tools and
   * actions waiting until it is taken or dropped. `restore` puts the conversation back as it
   * was before the dialogue was asked (the dialogue's checkpoint).
   */
  hold(turn: AgentTurn, utterance: U, words: string, restore: () => void): void {
    let release!: (used: boolean) => void;
    turn.held = { released: new Promise((resolve) => (release = resolve)), release: (used) => release(used), actions: [] };
    this.pending = { turn, words, utterance, restore };
  }

  /**
   * The caller's turn ended with `words`: when the early reply answers exactly these words of
   * `utterance`, it is the answer: released (its tools run) and returned with the actions it
   * held back, for the session to say. Else undefined (it is still pending: see `drop`).
   */
  take(utterance: U, words: string): { turn: AgentTurn; actions: CallAction[] } | undefined {
    const pending = this.pending;
    if (pending?.utterance !== utterance || pending.words !== words) return undefined;
    this.pending = undefined;
    const held = pending.turn.held!;
    pending.turn.held = undefined;
    held.release(true);
    return { turn: pending.turn, actions: held.actions };
  }

  /** The caller went on (or the call is closing): the early reply is dropped unheard and the conversation put back. */
  drop(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    pending.turn.abort.abort();
    if (this.playout.turn === pending.turn) this.playout.stop({ farEnd: false });
    pending.turn.held?.release(false);
    pending.restore();
    this.report({ type: "early_reply", used: false });
  }
}
