import type { CallAction, CallEvent, TranscriptSegment, TurnMetrics } from "../call-events.js";
import { insertSegment } from "../transcript-order.js";

/** What the record reports as it grows. */
export type RecordEvent = Extract<CallEvent, { type: "transcript" | "turn_metrics" }>;

/**
 * What a call leaves behind as it goes: its transcript, kept in the order the segments started
 * (words recognized late go where they were said), each agent turn's metrics, and what the
 * agent did.
 */
export class CallRecord {
  private readonly transcript: TranscriptSegment[] = [];
  private readonly turns: TurnMetrics[] = [];
  /** What the agent did, in order: the dialogue's replies and the tool runs add to it. */
  readonly actions: CallAction[] = [];
  /** Set once the transcript is final (see `close`). */
  private closed = false;
  /** The agent speaking, when it is not the call's first (a hand-off): its id goes on its segments. */
  speaker: string | undefined;

  constructor(private readonly report: (event: RecordEvent) => void) {}

  /** Whether the transcript is final: words recognized after that are lost with the call. */
  get transcriptClosed(): boolean {
    return this.closed;
  }

  /** `content` said by `role`, starting `atSeconds` into the call (kept to 10 ms). */
  said(role: TranscriptSegment["role"], content: string, atSeconds: number): void {
    const segment: TranscriptSegment = { role, content, timestamp: Math.round(atSeconds * 100) / 100, ...(role === "agent" && this.speaker ? { agent_id: this.speaker } : {}) };
    insertSegment(this.transcript, segment);
    this.report({ type: "transcript", segment });
  }

  /** An agent turn is over, `spokenText` of it heard from `atSeconds` into the call: its metrics, and what was heard. */
  turnEnded(metrics: TurnMetrics, spokenText: string, atSeconds: number): void {
    this.turns.push(metrics);
    this.report({ type: "turn_metrics", metrics });
    if (spokenText) this.said("agent", spokenText, atSeconds);
  }

  /** The transcript is final. */
  close(): void {
    this.closed = true;
  }

  /** The transcript so far (a copy). */
  transcriptSoFar(): TranscriptSegment[] {
    return [...this.transcript];
  }

  /** Copies of all three. */
  copy(): { transcript: TranscriptSegment[]; turns: TurnMetrics[]; actions: CallAction[] } {
    return { transcript: [...this.transcript], turns: [...this.turns], actions: [...this.actions] };
  }
}
