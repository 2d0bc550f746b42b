import type { AgentSettings } from "../../../types.js";
import { buildFaqIndex, type FaqEntry, type FaqIndex } from "./faq-matcher.js";
import type { Service } from "./service-extraction.js";
import { toUtterance } from "./utterance.js";
import { WallClockReader } from "./wall-clock.js";

/**
 * What the rules engine uses of an agent, read once per call. Metadata is free-form JSON, so
 * anything malformed is skipped rather than failing the call:
 * - `business_name`: string, used in greetings and closings;
 * - `faq`: `[{question, answer}]`;
 * - `services`: names (`["Cleaning", "Whitening"]`) or `{name, duration_minutes?}` objects;
 * - `timezone`: IANA name for "today" and "tomorrow" (default UTC).
 */
export interface AgentProfile {
  agentName: string;
  businessName: string | null;
  faq: FaqIndex;
  services: readonly Service[];
  /** Words of the service names: never taken for the caller's name. */
  serviceWords: ReadonlySet<string>;
  clock: WallClockReader;
  transferEnabled: boolean;
  transferMessage: string;
  /** The agent's end-call phrases, spelled like the caller's words. */
  endCallPhrases: readonly string[];
}

export function readAgentProfile(agent: AgentSettings): AgentProfile {
  const metadata = agent.metadata;
  const services = readServices(metadata.services);
  return {
    agentName: agent.name,
    businessName: nonBlank(metadata.business_name),
    faq: buildFaqIndex(readFaq(metadata.faq)),
    services,
    serviceWords: new Set(services.flatMap((s) => toUtterance(s.name).words)),
    clock: new WallClockReader(nonBlank(metadata.timezone) ?? "UTC"),
    transferEnabled: agent.transferEnabled,
    transferMessage: agent.transferMessage,
    endCallPhrases: agent.endCallPhrases.map((p) => toUtterance(p).text).filter((p) => p !== ""),
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

function readServices(value: unknown): Service[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    const name = nonBlank(typeof item === "object" && item !== null ? (item as Record<string, unknown>).name : item);
    if (!name) return [];
    const duration = typeof item === "object" && item !== null ? (item as Record<string, unknown>).duration_minutes : undefined;
    return [{ name, durationMinutes: typeof duration === "number" && Number.isInteger(duration) && duration > 0 ? duration : null }];
  });
}
