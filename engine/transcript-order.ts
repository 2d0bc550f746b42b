import type { TranscriptSegment } from "./call-events.js";

/** Puts `segment` into `transcript` in the order the segments started (words recognized late go where they were said). */
export function insertSegment(transcript: TranscriptSegment[], segment: TranscriptSegment): void {
  const after = transcript.findLastIndex((s) => s.timestamp <= segment.timestamp);
  transcript.splice(after + 1, 0, segment);
}
