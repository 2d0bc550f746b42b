/**
 * Tolerance for recognizer errors on long keywords ("apointment", "representitive"): words of
 * six letters or more match at edit distance 1, of nine or more at distance 2. Short words
 * must match exactly: "by" and "bye" or "know" and "no" are different words.
 */
export function similarWords(a: string, b: string): boolean {
  if (a === b) return true;
  const shorter = Math.min(a.length, b.length);
  if (shorter < 6 || a[0] !== b[0]) return false;
  const allowed = shorter >= 9 ? 2 : 1;
  if (Math.abs(a.length - b.length) > allowed) return false;
  return editDistance(a, b, allowed) <= allowed;
}

/** Levenshtein distance, giving up (returning `limit + 1`) once it exceeds `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}
