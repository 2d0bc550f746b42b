/**
 * Turn-taking figures read off a call's timeline on the client's clock: when agent audio
 * frames arrived, when `clear` messages arrived, and when the caller's lines were sent.
 * Pure functions, so that they can be checked on made-up timelines.
 */

/** Agent audio missing this long is a stop; agent audio after at least this much quiet is a start. */
export const AGENT_STOP_MS = 300;
/** A stop counts against a backchannel when it begins by this long after the backchannel's last frame. */
export const BACKCHANNEL_STOP_WINDOW_MS = 3000;

/** When one caller line's first and last frames were sent. */
export interface LineSent {
  startedAt: number;
  endedAt: number;
}

/** Arrival times of the first agent frame of each stretch of agent audio (after `quietMs` or more without any). */
export function agentAudioStarts(arrivals: readonly number[], quietMs = AGENT_STOP_MS): number[] {
  return arrivals.filter((at, i) => i === 0 || at - arrivals[i - 1]! >= quietMs);
}

/**
 * False endpoints of one `say` step: the times agent audio started after the end of its first
 * line and before its last frame was sent, during a pause between lines or over a later line.
 * The agent answered before the caller had finished. Zero for a single line.
 */
export function falseEndpoints(arrivals: readonly number[], lines: readonly LineSent[]): number[] {
  if (lines.length < 2) return [];
  const from = lines[0]!.endedAt;
  const until = lines[lines.length - 1]!.endedAt;
  return agentAudioStarts(arrivals).filter((at) => at > from && at < until);
}

/** A backchannel spoken over the agent, and when the caller next did something (or the call ended). */
export interface BackchannelWindow {
  startedAt: number;
  endedAt: number;
  /** The next caller step's first frame or key, or the end of the call. */
  until: number;
}

export interface BackchannelVerdict {
  /** When the agent stopped (a `clear`, else its last frame before a gap over AGENT_STOP_MS); null: it talked on. */
  stoppedAt: number | null;
  /** When agent audio came again after that stop, before `until`; null: it did not. */
  resumedAt: number | null;
}

/**
 * Whether the agent stopped for a backchannel: a `clear`, or agent audio missing for more than
 * AGENT_STOP_MS and then coming again, beginning after the backchannel started and no later
 * than BACKCHANNEL_STOP_WINDOW_MS after it ended (and before the caller's next step). The end
 * of the agent's turn is no stop (no audio follows it), so a backchannel belongs well inside a
 * long agent turn. A stop is resumed when agent audio arrives again before `until`.
 */
export function backchannelVerdict(arrivals: readonly number[], clears: readonly number[], w: BackchannelWindow): BackchannelVerdict {
  const latest = Math.min(w.endedAt + BACKCHANNEL_STOP_WINDOW_MS, w.until);
  const clear = clears.find((at) => at >= w.startedAt && at <= latest);
  let gapAt: number | undefined;
  for (let i = 0; i + 1 < arrivals.length; i++) {
    const at = arrivals[i]!;
    const next = arrivals[i + 1]!;
    if (at < w.startedAt) continue;
    if (at > latest || next >= w.until) break;
    if (next - at > AGENT_STOP_MS) {
      gapAt = at;
      break;
    }
  }
  // The clear when there is one (the server's word for the stop), else where the audio went missing.
  const stoppedAt = clear ?? gapAt;
  if (stoppedAt === undefined) return { stoppedAt: null, resumedAt: null };
  // After a gap the next frame is the resume; after a clear, any later frame is new audio.
  const resumedAt = arrivals.find((at) => at > stoppedAt && at < w.until) ?? null;
  return { stoppedAt, resumedAt };
}

/**
 * When the agent's audio stopped after caller speech that began at `from`: a `clear`, or the
 * arrival of its last frame before more than AGENT_STOP_MS without any, whichever is first,
 * within `windowMs`. Null when the agent was not speaking at `from` (no frame at or after it
 * before a stop) or talked on through the window.
 */
export function agentStopAfter(arrivals: readonly number[], clears: readonly number[], from: number, windowMs: number): number | null {
  const latest = from + windowMs;
  const clear = clears.find((at) => at >= from && at <= latest);
  let i = arrivals.findIndex((at) => at >= from);
  let gapAt: number | undefined;
  // Agent audio must be flowing at `from` (its next frame within AGENT_STOP_MS), not start later.
  if (i >= 0 && arrivals[i]! - from <= AGENT_STOP_MS) {
    for (; i < arrivals.length && arrivals[i]! <= latest; i++) {
      const next = arrivals[i + 1];
      if (next === undefined || next - arrivals[i]! > AGENT_STOP_MS) {
        gapAt = arrivals[i]!;
        break;
      }
    }
  }
  const stops = [clear, gapAt].filter((t): t is number => t !== undefined);
  return stops.length ? Math.min(...stops) : null;
}

