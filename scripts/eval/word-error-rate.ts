function words(text: string): string[] {
  return text.toLowerCase().split(/\s+/).filter(Boolean);
}

/** Word error rate: word-level edit distance over the reference's length. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = words(reference);
  const hyp = words(hypothesis);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j++) {
      const substitution = previous[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[hyp.length]! / ref.length;
}

/** Share of the reference's words that the hypothesis contains (each used once), in any order. */
export function wordOverlap(reference: string, hypothesis: string): number {
  const remaining = words(hypothesis);
  const ref = words(reference);
  let found = 0;
  for (const word of ref) {
    const at = remaining.indexOf(word);
    if (at >= 0) {
      remaining.splice(at, 1);
      found++;
    }
  }
  return found / ref.length;
}
