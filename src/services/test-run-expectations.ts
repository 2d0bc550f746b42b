import type { CallAction, CallAnalysis, FieldValue, TranscriptSegment } from "../../engine/index.js";
import type { ExpectationResult, ScenarioExpectations, ScenarioResult } from "./test-run-scenario.js";

/** What a scenario's call showed, for its expectations to be checked against. */
export interface ScenarioEvidence {
  transcript: readonly TranscriptSegment[];
  analysis: CallAnalysis;
  actions: readonly CallAction[];
  turns: ScenarioResult["turns"];
}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;

/**
 * Each expectation of a scenario, checked: one result per outcome, data field, phrase, latency
 * bound and appointment field, so a failure names exactly what differed and what was seen.
 * Words are compared as words (case and punctuation aside): "booked" is said in "I've booked
 * you in.", not in "overbooked".
 */
export function checkExpectations(expect: ScenarioExpectations, seen: ScenarioEvidence): ExpectationResult[] {
  const results: ExpectationResult[] = [];
  const check = (name: string, expected: unknown, value: unknown, passed: boolean) => results.push({ name, passed, expected, seen: value });

  if (expect.outcome !== undefined) check("outcome", expect.outcome, seen.analysis.outcome, seen.analysis.outcome === expect.outcome);
  for (const [field, expected] of Object.entries(expect.extracted_data ?? {})) {
    const value = seen.analysis.extracted_data[field] ?? null;
    check(`extracted_data.${field}`, expected, value, sameValue(expected, value));
  }
  const agentWords = ` ${words(seen.transcript.filter((s) => s.role === "agent").map((s) => s.content).join(" "))} `;
  for (const phrase of expect.must_say ?? []) check(`must_say: ${phrase}`, phrase, saidIn(agentWords, phrase), saidIn(agentWords, phrase) !== null);
  for (const phrase of expect.must_not_say ?? []) check(`must_not_say: ${phrase}`, phrase, saidIn(agentWords, phrase), saidIn(agentWords, phrase) === null);
  if (expect.max_voice_to_voice_ms !== undefined) {
    const measured = seen.turns.flatMap((t) => (t.voice_to_voice_ms === null ? [] : [t.voice_to_voice_ms]));
    const slowest = measured.length > 0 ? Math.max(...measured) : null;
    check("max_voice_to_voice_ms", expect.max_voice_to_voice_ms, slowest, slowest !== null && slowest <= expect.max_voice_to_voice_ms);
  }
  if (expect.appointment) {
    const booked = bookedAppointment(seen.actions);
    for (const [field, expected] of Object.entries(expect.appointment)) {
      if (expected === undefined) continue;
      const value = booked === null ? null : field === "weekday" ? weekdayOf(booked.date) : (booked[field as keyof typeof booked] ?? null);
      check(`appointment.${field}`, expected, value, value !== null && sameValue(expected, value));
    }
  }
  return results;
}

/** The last appointment the call booked (a successful book_appointment), as its fields; null when none. */
function bookedAppointment(actions: readonly CallAction[]): { service: string | null; date: string; time: string; customer_name: string | null } | null {
  const booked = actions.filter((a): a is Extract<CallAction, { type: "tool_call" }> => a.type === "tool_call" && a.name === "book_appointment" && a.result.ok).at(-1);
  if (!booked || !booked.result.ok) return null;
  const data = (booked.result.data ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : null);
  return {
    service: text(booked.arguments.service),
    customer_name: text(booked.arguments.customer_name),
    date: text(data.date) ?? text(booked.arguments.date) ?? "",
    time: text(data.time) ?? text(booked.arguments.time) ?? "",
  };
}

function weekdayOf(date: string): string | null {
  const at = Date.parse(`${date}T12:00:00Z`);
  return Number.isNaN(at) ? null : WEEKDAYS[new Date(at).getUTCDay()]!;
}

/** Strings compare as words (case, punctuation and spacing aside); other values exactly. */
function sameValue(expected: unknown, value: unknown): boolean {
  if (typeof expected === "string" && typeof value === "string") return words(expected) === words(value);
  return expected === (value as FieldValue);
}

/** The phrase as found among the words (null: not said). */
function saidIn(spacedWords: string, phrase: string): string | null {
  const wanted = words(phrase);
  return wanted !== "" && spacedWords.includes(` ${wanted} `) ? wanted : null;
}

/** Lower-case words separated by single spaces; apostrophes kept inside words ("i've"). */
function words(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, " ")
    .replace(/(^|\s)'+|'+(\s|$)/g, " ")
    .trim()
    .replace(/\s+/g, " ");
}
