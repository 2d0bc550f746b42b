/**
 * A crude English stem for matching words in FAQ questions and service names: "hours" and
 * "hour", "opening" and "open", "cleanings" and "cleaning" meet. Not a linguistic stemmer.
 */
export function stem(word: string): string {
  let w = word.replace(/'s$/, "");
  if (w.length > 4 && w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith("ed")) return w.slice(0, -2);
  return w;
}
