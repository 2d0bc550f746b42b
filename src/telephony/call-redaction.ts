import { rm } from "node:fs/promises";
import type { Logger } from "pino";
import { compileRedaction, redactJson, redactTranscript, toneOverStretches, type CallSummary, type Redaction, type TranscriptSegment } from "../../engine/index.js";
import type { AgentRecord } from "../db/repositories/agents.js";

/**
 * What a call keeps of what was said, under its agent's `redact` setting (docs/redaction.md):
 * card numbers, SSNs and the like replaced by `[kind]` in the transcript and the tool calls
 * before anything is stored (so the analysis, the events and the webhooks, all made from what
 * is stored, never see them), and the stretches of the recording they were said in replaced by a
 * tone. Done in this process; no service is asked.
 */
export class CallRedaction {
  private constructor(private readonly redaction: Redaction) {}

  /** The call's redaction; null when its agent redacts nothing. Throws on a setting that does not compile (refused when saved). */
  static of(agent: Pick<AgentRecord, "redact">): CallRedaction | null {
    return agent.redact.length === 0 ? null : new CallRedaction(compileRedaction(agent.redact));
  }

  /** The transcript so far as it may be stored (the live call's heartbeat). */
  transcript(segments: readonly TranscriptSegment[]): TranscriptSegment[] {
    return redactTranscript(segments, this.redaction).transcript;
  }

  /**
   * The ended call as it may be kept: transcript and actions redacted, the recording's file
   * toned over where they were said. A recording that cannot be toned over is deleted rather
   * than kept with what it must not hold (logged).
   */
  async ended(summary: CallSummary, log: Logger): Promise<CallSummary> {
    const { transcript, stretches } = redactTranscript(summary.transcript, this.redaction);
    let recording = summary.recording;
    if (recording && stretches.length > 0) {
      try {
        await toneOverStretches(recording.path, stretches);
      } catch (err) {
        log.error({ err }, "the recording could not be redacted: it is deleted, not kept");
        await rm(recording.path, { force: true }).catch(() => undefined);
        recording = null;
      }
    }
    return { ...summary, transcript, actions: redactJson(summary.actions, this.redaction), recording };
  }
}
