import { readFile } from "node:fs/promises";
import path from "node:path";

/** The pronouncing dictionary of Debian's US-English model, in the model folder. */
const DICTIONARY_FILE = "cmudict-en-us.dict";

const loaded = new Map<string, Promise<ReadonlySet<string>>>();

/**
 * The words the recognizer can hear (a grammar naming any other does not compile): the
 * dictionary's entries ("word PH ON ES", alternate pronunciations as "word(2) ..."), read once
 * per model folder (about 135,000 words).
 */
export function dictionaryWords(modelDir: string): Promise<ReadonlySet<string>> {
  const file = path.join(modelDir, DICTIONARY_FILE);
  let words = loaded.get(file);
  if (!words) {
    words = readFile(file, "utf8").then((text) => {
      const set = new Set<string>();
      for (const line of text.split("\n")) {
        const word = line.slice(0, line.indexOf(" ")).replace(/\(\d+\)$/, "");
        if (word !== "") set.add(word);
      }
      return set;
    });
    // A failed read is tried again by the next caller rather than kept.
    words.catch(() => loaded.delete(file));
    loaded.set(file, words);
  }
  return words;
}
