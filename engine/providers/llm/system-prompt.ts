import type { AgentSettings } from "../../types.js";
import { factsText } from "./facts-text.js";

/**
 * The system message of one call: the agent's own prompt, then what a model needs to talk on
 * the phone (its words are synthesised as they stream, so markdown or long paragraphs come
 * out as noise and delay), the date (bookings need YYYY-MM-DD), the agent's metadata and the
 * call's context.
 */
export function systemPrompt(agent: AgentSettings, context: Record<string, unknown>, now: Date): string {
  const sections = [agent.systemPrompt.trim(), voiceGuidance(agent), today(now, agent.metadata.timezone)];
  const business = factsText(agent.metadata);
  if (business) sections.push(`About the business:\n${business}`);
  const call = factsText(context);
  if (call) sections.push(`About this call:\n${call}`);
  return sections.filter((s) => s !== "").join("\n\n");
}

function voiceGuidance(agent: AgentSettings): string {
  const lines = [
    `You are ${agent.name}, talking with a caller on a live phone call, in ${languageName(agent.language)}. Everything you write is spoken aloud by a text-to-speech voice, so:`,
    "- Reply in one to three short spoken sentences and ask one question at a time.",
    "- Write plain words only: no markdown, lists, emoji, links or symbols.",
    "- Say dates, times and numbers the way a person says them aloud.",
    "- The caller's words come from speech recognition and may be misheard: if something is unclear, ask.",
    "To book an appointment, collect the caller's name, the service, the date and the time, read them back, and call book_appointment once the caller agrees.",
  ];
  if (agent.transferEnabled) lines.push("If the caller asks for a person, or you cannot help, tell them and call transfer_call.");
  lines.push("When the conversation is over, say goodbye and call end_call.");
  return lines.join("\n");
}

/** "Today is Saturday, March 1, 2025 (2025-03-01); the local time is 10:00 (UTC)." in the business's zone. */
function today(now: Date, zone: unknown): string {
  const timeZone = typeof zone === "string" && isTimeZone(zone) ? zone : "UTC";
  const spoken = new Intl.DateTimeFormat("en-US", { timeZone, weekday: "long", year: "numeric", month: "long", day: "numeric" }).format(now);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" })
      .formatToParts(now)
      .map((p) => [p.type, p.value]),
  );
  return `Today is ${spoken} (${parts.year}-${parts.month}-${parts.day}); the local time is ${parts.hour}:${parts.minute} (${timeZone}).`;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Building an Intl.DisplayNames costs ~1 ms: one serves every call. */
const LANGUAGE_NAMES = new Intl.DisplayNames(["en"], { type: "language" });

/** "en-US" -> "American English"; an unknown tag is used as it is. */
function languageName(tag: string): string {
  try {
    return LANGUAGE_NAMES.of(tag) ?? tag;
  } catch {
    return tag;
  }
}
