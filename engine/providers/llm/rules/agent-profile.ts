import { fillTemplate } from "../../../text/template.js";
import type { AgentSettings } from "../../../types.js";
import { buildFaqIndex, type FaqEntry, type FaqIndex } from "./faq-matcher.js";
import { buildIntentIndex, type IntentIndex } from "./intent-requests.js";
import { DEFAULT_MENU_GOAL } from "./phone-menu.js";
import type { Service } from "./service-extraction.js";
import { toUtterance } from "./utterance.js";
import { WallClockReader } from "./wall-clock.js";

/**
 * What the rules engine uses of an agent, read once per call. Metadata is free-form JSON, so
 * anything malformed is skipped rather than failing the call:
 * - `business_name`: string, used in greetings and closings;
 * - `faq`: `[{question, answer}]`;
 * - `services`: names (`["Cleaning", "Whitening"]`) or `{name, duration_minutes?}` objects;
 * - `timezone`: IANA name for "today" and "tomorrow" (default UTC);
 * - `voicemail_message`: string, what the agent says to an answering machine, with
 *   `{{placeholders}}` filled from the metadata and the call's context like `first_message`;
 * - `phone_menu_choice`: string, the option the agent picks in another company's phone menu
 *   ("appointments"); default: one that reaches a person.
 */
export interface AgentProfile {
  agentName: string;
  businessName: string | null;
  faq: FaqIndex;
  /** The agent's `intents`: requests answered with one of its tools. */
  intents: IntentIndex;
  services: readonly Service[];
  /** Words of the service names: never taken for the caller's name. */
  serviceWords: ReadonlySet<string>;
  clock: WallClockReader;
  transferEnabled: boolean;
  transferMessage: string;
  /** The agent's end-call phrases, spelled like the caller's words. */
  endCallPhrases: readonly string[];
  /** `metadata.voicemail_message`, filled in; null when not set (the agent then says a default). */
  voicemailMessage: string | null;
  /** What the agent picks in a phone menu: `metadata.phone_menu_choice`, else a person. */
  menuGoal: readonly string[];
}

/** `context`: the call's values for `{{placeholders}}` (customer name, purpose, ...). */
export function readAgentProfile(agent: AgentSettings, context: Record<string, unknown> = {}): AgentProfile {
  const metadata = agent.metadata;
  const voicemailTemplate = nonBlank(metadata.voicemail_message);
  const services = readServices(metadata.services);
  return {
    agentName: agent.name,
    businessName: nonBlank(metadata.business_name),
    faq: buildFaqIndex(readFaq(metadata.faq)),
    intents: buildIntentIndex(agent.intents ?? []),
    services,
    serviceWords: new Set(services.flatMap((s) => toUtterance(s.name).words)),
    clock: new WallClockReader(nonBlank(metadata.timezone) ?? "UTC"),
    transferEnabled: agent.transferEnabled,
    transferMessage: agent.transferMessage,
    endCallPhrases: agent.endCallPhrases.map((p) => toUtterance(p).text).filter((p) => p !== ""),
    voicemailMessage: voicemailTemplate ? nonBlank(fillTemplate(voicemailTemplate, { ...metadata, ...context })) : null,
    menuGoal: nonBlank(metadata.phone_menu_choice) ? [nonBlank(metadata.phone_menu_choice)!] : DEFAULT_MENU_GOAL,
  };
}

function nonBlank(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

function readFaq(value: unknown): FaqEntry[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (typeof item !== "object" || item === null) return [];
    const question = nonBlank((item as Record<string, unknown>).question);
    const answer = nonBlank((item as Record<string, unknown>).answer);
    return question && answer ? [{ question, answer }] : [];
  });
}

/** The services `metadata.services` lists (names or `{name, duration_minutes}`); anything malformed is skipped. */
export function readServices(value: unknown): Service[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    const name = nonBlank(typeof item === "object" && item !== null ? (item as Record<string, unknown>).name : item);
    if (!name) return [];
    const duration = typeof item === "object" && item !== null ? (item as Record<string, unknown>).duration_minutes : undefined;
    return [{ name, durationMinutes: typeof duration === "number" && Number.isInteger(duration) && duration > 0 ? duration : null }];
  });
}
