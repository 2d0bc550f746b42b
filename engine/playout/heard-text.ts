/** One sentence of an agent turn, and the frames of its audio queued so far. */
export interface SpokenSentence {
  text: string;
  frames: number;
}

/** What the caller heard of a reply cut short. */
export interface HeardText {
  /** The sentences played in full, then the share of the cut sentence's words played. */
  text: string;
  /** The sentences played in full only. */
  before: string;
  /** The reply from the cut sentence on (said again after a false interruption). */
  remaining: string;
}

/**
 * What the caller heard of a reply cut after `playedFrames`: the share of the cut sentence is
 * in proportion to its audio played.
 */
export function heardText(sentences: readonly SpokenSentence[], playedFrames: number): HeardText {
  const full: string[] = [];
  let left = playedFrames;
  for (const [i, sentence] of sentences.entries()) {
    // A sentence with no audio played after it (none synthesized yet) was not heard.
    if (left >= sentence.frames && (left > 0 || sentence.frames > 0)) {
      full.push(sentence.text);
      left -= sentence.frames;
      continue;
    }
    const words = sentence.text.split(/\s+/);
    const count = Math.floor((words.length * left) / Math.max(1, sentence.frames));
    const before = full.join(" ");
    return {
      text: [before, words.slice(0, count).join(" ")].filter(Boolean).join(" "),
      before,
      remaining: sentences.slice(i).map((s) => s.text).join(" "),
    };
  }
  const text = full.join(" ");
  return { text, before: text, remaining: "" };
}
