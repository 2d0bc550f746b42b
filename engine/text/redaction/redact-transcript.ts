import type { TranscriptSegment } from "../../call-events.js";
import { redactText } from "./redact-text.js";
import type { Redaction } from "./redaction-rules.js";

/** Longest stretch of a segment's audio hidden (the last segment's, whose end is not known). */
const MAX_SEGMENT_SECONDS = 30;
/** Hidden before a segment's start too: speech detection dates an utterance a little after its first sound. */
const LEAD_SECONDS = 0.5;

/** Where in the call a redacted segment was said: its side and its time, in seconds from the call's start. */
export interface RedactedStretch {
  role: TranscriptSegment["role"];
  fromSeconds: number;
  toSeconds: number;
}

/**
 * A transcript with what must not be kept replaced by `[kind]`, and the stretches of the call in
 * which those segments were said, for the recording to hide. A segment records only when it
 * began, so its stretch runs from half a second before that to the start of the next segment
 * (of either side), at most 30 s:
 * the whole utterance and the pause after it, never just the words (the recognizer gives no
 * word times). Segments are copied; untouched ones keep their content.
 */
export function redactTranscript(transcript: readonly TranscriptSegment[], redaction: Redaction): { transcript: TranscriptSegment[]; stretches: RedactedStretch[] } {
  const stretches: RedactedStretch[] = [];
  const redacted = transcript.map((segment, index) => {
    const { text, spans } = redactText(segment.content, redaction);
    if (spans.length === 0) return { ...segment };
    const next = transcript.slice(index + 1).find((later) => later.timestamp > segment.timestamp);
    const end = Math.min(next?.timestamp ?? Infinity, segment.timestamp + MAX_SEGMENT_SECONDS);
    stretches.push({ role: segment.role, fromSeconds: Math.max(0, segment.timestamp - LEAD_SECONDS), toSeconds: end });
    return { ...segment, content: text };
  });
  return { transcript: redacted, stretches };
}
