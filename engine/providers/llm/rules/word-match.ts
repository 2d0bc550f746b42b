import { similarWords } from "./similar-words.js";
import { stem } from "./word-stem.js";

/** Two words that mean the same for matching: same stem ("hours", "hour") or a likely recognizer slip ("whitning"). */
export function wordsMatch(a: string, b: string): boolean {
  return stem(a) === stem(b) || similarWords(a, b);
}
