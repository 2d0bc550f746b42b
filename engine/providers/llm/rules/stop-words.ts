/**
 * Words that carry no topic: left out when matching the caller's words to FAQ questions and
 * service names, and never taken for a name. Includes telephone fillers ("um", "like").
 */
export const STOP_WORDS = [
  "a", "about", "actually", "after", "again", "ah", "all", "also", "am", "an", "and", "any", "anyone", "anything", "are", "as", "at",
  "be", "because", "been", "before", "being", "both", "but", "by",
  "can", "cannot", "could", "did", "do", "does", "doing", "done", "each", "er", "erm", "even",
  "for", "from", "get", "got", "had", "has", "have", "having", "he", "hello", "her", "here", "hey", "hi", "him", "his", "hmm", "how",
  "i", "if", "in", "into", "is", "it", "its", "just", "know", "let", "like", "me", "might", "mine", "more", "most", "much", "must", "my",
  "need", "no", "nor", "not", "now", "of", "oh", "ok", "okay", "on", "one", "or", "our", "ours", "out", "please",
  "really", "said", "say", "see", "she", "should", "so", "some", "sure", "tell", "than", "thank", "thanks", "that", "the", "their", "them",
  "then", "there", "these", "they", "this", "those", "to", "too", "uh", "um", "uhm", "up", "us", "very",
  "want", "wanted", "was", "we", "well", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "wondering",
  "would", "yeah", "yes", "you", "your", "yours",
] as const;

export const STOP_WORD_SET: ReadonlySet<string> = new Set(STOP_WORDS);
