import type { CallAction, CallEndReason, TurnMetrics } from "../call-events.js";
import type { TurnAudio } from "../playout/agent-playout.js";
import type { Handoff } from "../tools.js";

/** When the caller's turn ended, as the agent turn that answers it records it. */
export type CallerTimings = Pick<TurnMetrics, "endOfSpeechAt" | "endpointAt" | "asrFinalAt">;

/** One agent turn: its reply, its audio sentence by sentence as it is queued and played, its metrics. */
export interface AgentTurn extends TurnAudio {
  id: number;
  /**
   * A dialogue `reply`; `fixed` text (the greeting, the rest of a reply cut short); or the
   * session's `fallback` line after a provider failed, said in the fallback voice.
   */
  kind: "reply" | "fixed" | "fallback";
  abort: AbortController;
  metrics: TurnMetrics;
  /** The dialogue finished and all its audio is queued. */
  complete: boolean;
  /** All of the turn's text is known (the dialogue finished it): a TTS failure can leave its rest to the fallback voice. */
  textComplete: boolean;
  /** What to do once this reply has been heard in full: listen, transfer, pass the caller to another agent, or end the call for this reason. */
  after: "listen" | "transfer" | { handoff: Handoff } | { endCall: CallEndReason };
  text: string;
  /** Says `line` now, ahead of the rest of the reply (a tool is taking long). */
  hold?: (line: string) => void;
  /**
   * A supervisor's line (or its rest after a false interruption): what the caller hears of it
   * goes to the dialogue as the agent's own words when the turn ends (`agentSaid`), never as a
   * reply to truncate.
   */
  supervisor?: boolean;
  /** For the rest of a reply said after a false interruption: what was heard before the cut. */
  resumesAfter?: string;
  /**
   * An early reply, prepared while the caller's turn may still go on: unheard (its audio paused
   * in the playout, its tools and actions waiting) until `release(true)` makes it the answer or
   * `release(false)` drops it.
   */
  held?: { released: Promise<boolean>; release: (used: boolean) => void; actions: CallAction[] };
}

/** A new agent turn numbered `id`, answering the caller's turn that ended at `caller` (null: none, a greeting or a line the agent says unasked). */
export function newAgentTurn(id: number, caller: CallerTimings | null, kind: AgentTurn["kind"]): AgentTurn {
  return {
    id,
    kind,
    abort: new AbortController(),
    metrics: {
      turnId: id,
      endOfSpeechAt: caller?.endOfSpeechAt ?? null,
      endpointAt: caller?.endpointAt ?? null,
      asrFinalAt: caller?.asrFinalAt ?? null,
      firstTokenAt: null,
      firstTtsAudioAt: null,
      firstFrameSentAt: null,
      voiceToVoiceMs: null,
      interrupted: false,
    },
    sentences: [],
    queuedFrames: 0,
    playedFrames: 0,
    complete: false,
    textComplete: false,
    after: "listen",
    text: "",
  };
}
