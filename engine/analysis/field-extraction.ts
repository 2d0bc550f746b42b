import type { CountryCode } from "libphonenumber-js";
import type { TranscriptSegment } from "../call-events.js";
import { STOP_WORD_SET } from "../providers/llm/rules/stop-words.js";
import { toUtterance } from "../providers/llm/rules/utterance.js";
import { stem } from "../providers/llm/rules/word-stem.js";
import type { WallClock } from "../providers/llm/rules/wall-clock.js";
import type { AnalysisField, AnalysisFieldType, FieldValue } from "./call-analysis.js";
import { readValue } from "./typed-values.js";

/** Types whose values say what they are wherever they are said: one such value in the whole call is the field's. */
const SELF_EVIDENT: ReadonlySet<AnalysisFieldType> = new Set<AnalysisFieldType>(["email", "phone", "enum"]);

/**
 * Reads each declared field from the caller's turns, never guessing:
 * 1. turns that answer the agent's question about the field (the agent's turn just before
 *    names it: one of the words of its `name`, or two of its `description`), or that name it
 *    themselves ("my email is ..."): the last value read wins (callers correct themselves);
 * 2. for emails, phone numbers and enum values, which say what they are: any caller turn, when
 *    the call holds exactly one such value;
 * 3. otherwise null.
 */
export function extractFields(
  fields: readonly AnalysisField[],
  transcript: readonly TranscriptSegment[],
  context: { clock: WallClock; defaultCountry: CountryCode },
): Record<string, FieldValue> {
  const turns = callerTurns(transcript);
  const values: Record<string, FieldValue> = {};
  for (const field of fields) {
    const words = fieldWords(field);
    let value: FieldValue = null;
    for (const turn of turns) {
      const answering = names(turn.questionStems, words);
      if (!answering && !names(turn.stems, words)) continue;
      value = readValue(field, turn.text, { ...context, answering, fieldWords: words.name }) ?? value;
    }
    if (value === null && SELF_EVIDENT.has(field.type)) {
      const found = new Set(turns.map((turn) => readValue(field, turn.text, { ...context, answering: false, fieldWords: words.name })).filter((v) => v !== null));
      if (found.size === 1) value = [...found][0]!;
    }
    values[field.name] = value;
  }
  return values;
}

interface CallerTurn {
  text: string;
  /** The turn's words, stemmed (read once for every field). */
  stems: ReadonlySet<string>;
  /** The same of what the agent said last before it (none at the start of the call). */
  questionStems: ReadonlySet<string>;
}

function callerTurns(transcript: readonly TranscriptSegment[]): CallerTurn[] {
  const stems = (text: string) => new Set(toUtterance(text).words.map(stem));
  const turns: CallerTurn[] = [];
  let question: ReadonlySet<string> = new Set();
  for (const segment of transcript) {
    if (segment.role === "agent") question = stems(segment.content);
    else {
      turns.push({ text: segment.content, stems: stems(segment.content), questionStems: question });
      question = new Set();
    }
  }
  return turns;
}

interface FieldWords {
  /** Words of the field's name (`customer_email` -> customer, email), stemmed. */
  name: string[];
  /** Words of its description, stemmed, without stop words. */
  description: string[];
}

/** The words that name a field: its name split at `_`, `-` and case changes, and its description's topic words. */
export function fieldWords(field: Pick<AnalysisField, "name" | "description">): FieldWords {
  const topical = (text: string) => [...new Set(toUtterance(text).words.filter((w) => w.length > 1 && !STOP_WORD_SET.has(w)).map(stem))];
  return { name: topical(field.name.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ")), description: topical(field.description) };
}

/** Whether words said (stemmed) name the field: one of its name's words, or two of its description's. */
function names(said: ReadonlySet<string>, words: FieldWords): boolean {
  return words.name.some((w) => said.has(w)) || words.description.filter((w) => said.has(w)).length >= 2;
}
