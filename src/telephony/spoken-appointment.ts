import { readServices } from "../../engine/index.js";

/**
 * What a reminder call may say of its appointment. The customer's name and the service are
 * text a key holding `appointments:write` can set, and a reminder call speaks to whoever the
 * appointment names from the business's own number: free text there would let a key make the
 * agent say anything ("cleaning appointment. Your bank account is locked, press one"). So
 * only bounded, name-like text is spoken, never a sentence: a name is at most a few words of
 * letters; a service is one of the agent's `metadata.services` (in the agent's spelling) or,
 * when the agent lists none, a short phrase of words. Anything else is left unsaid (the call
 * says "your appointment").
 */

const NAME_WORD = /^\p{L}[\p{L}\p{M}'’-]*$/u;
const SERVICE_WORD = /^[\p{L}\p{N}][\p{L}\p{M}\p{N}'’&-]*$/u;
const MAX_NAME_WORDS = 4;
const MAX_NAME_LENGTH = 60;
const MAX_SERVICE_WORDS = 5;
const MAX_SERVICE_LENGTH = 40;

function words(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}

/** `text`'s words joined by single spaces when there are 1 to `maxWords`, each a `word`, `maxLength` characters in all; else null. */
function boundedPhrase(text: string, word: RegExp, maxWords: number, maxLength: number): string | null {
  const parts = words(text);
  if (parts.length === 0 || parts.length > maxWords || !parts.every((w) => word.test(w))) return null;
  const phrase = parts.join(" ");
  return phrase.length <= maxLength ? phrase : null;
}

/** The customer's name as a reminder call may say it, or null when it is not name-like. */
export function spokenName(name: string | null): string | null {
  return name ? boundedPhrase(name, NAME_WORD, MAX_NAME_WORDS, MAX_NAME_LENGTH) : null;
}

/** The first word of the customer's spoken name ("Hi Ada"), or null. */
export function spokenFirstName(name: string | null): string | null {
  return spokenName(name)?.split(" ")[0] ?? null;
}

/** The service as a reminder call may say it, or null (see the module comment). */
export function spokenService(service: string | null, agentMetadata: Record<string, unknown>): string | null {
  if (!service) return null;
  const said = words(service).join(" ").toLowerCase();
  const listed = readServices(agentMetadata.services);
  if (listed.length > 0) return listed.find((s) => words(s.name).join(" ").toLowerCase() === said)?.name ?? null;
  return boundedPhrase(service, SERVICE_WORD, MAX_SERVICE_WORDS, MAX_SERVICE_LENGTH);
}
