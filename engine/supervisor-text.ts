/** Longest line a supervisor may have the agent say, or give it as guidance, in characters. */
export const SUPERVISOR_TEXT_MAX_CHARS = 1000;
/** A supervisor's guidance kept for the rest of a call: the newest this many (older ones are dropped). */
export const SUPERVISOR_GUIDANCE_KEPT = 20;

/**
 * `text` as a supervisor's line (see LiveCall.say and LiveCall.whisper), trimmed. Throws a
 * RangeError when it is empty (or only blanks) or longer than SUPERVISOR_TEXT_MAX_CHARS (UTF-16 units, as `length` counts): the
 * API refuses those before, so reaching the engine with one is a caller's bug.
 */
export function supervisorText(text: string): string {
  if (typeof text !== "string") throw new RangeError("a supervisor's text must be a string");
  const trimmed = text.trim();
  if (trimmed === "") throw new RangeError("a supervisor's text must not be empty");
  if (text.length > SUPERVISOR_TEXT_MAX_CHARS) throw new RangeError(`a supervisor's text must be at most ${SUPERVISOR_TEXT_MAX_CHARS} characters, got ${text.length}`);
  return trimmed;
}
