import { createRulesDialogueProvider } from "../../engine/providers/llm/rules/rules-dialogue-provider.js";
import type { ExpectedSpeech } from "../../engine/providers/asr/expected-speech.js";
import type { DialogueSession } from "../../engine/providers/llm/dialogue-provider.js";
import type { ToolExecutor, ToolResult } from "../../engine/tools.js";
import type { AgentSettings } from "../../engine/types.js";
import { EVAL_SERVICES } from "./hearing-corpus.js";

/** The slots of a booking, as the agent's book_appointment call carries them. */
export const BOOKING_SLOTS = ["service", "date", "time", "customer_name"] as const;
export type BookingSlot = (typeof BOOKING_SLOTS)[number];
export type Booking = Record<BookingSlot, string>;

/** Saturday, March 1, 2025, 10:00 UTC: "monday" is March 3 whatever day the evaluation runs. */
const NOW = new Date("2025-03-01T10:00:00Z");

/** The evaluated agent: the embedded dialogue with a dental practice's services. */
const AGENT: AgentSettings = {
  id: "agent_eval",
  name: "Ava",
  systemPrompt: "You book dental appointments for Bright Smile Dental.",
  voiceId: "flite-slt",
  firstMessage: null,
  language: "en-US",
  model: "llm-small",
  temperature: 0.7,
  maxTokens: 150,
  interruptionThreshold: 0.5,
  endCallPhrases: [],
  metadata: { business_name: "Bright Smile Dental", services: [...EVAL_SERVICES] },
  transferEnabled: false,
  transferNumber: null,
  transferMessage: "Please hold while I transfer you.",
  endpointingMode: "fixed",
  endpointingMs: 500,
};

/** A conversation with the evaluated agent: the caller's turns go to `session`; `booked` is its first booking. */
export interface EvalDialogue {
  session: DialogueSession;
  booked(): Booking | null;
  /** One caller turn, the reply read to its end. */
  say(line: string): Promise<void>;
}

/** A new conversation with the evaluated agent (the embedded dialogue), as if it had just greeted the caller. */
export function openEvalDialogue(): EvalDialogue {
  let booked: Booking | null = null;
  const tools: ToolExecutor = {
    definitions: [],
    async execute(name, args): Promise<ToolResult> {
      if (name === "book_appointment" && !booked) booked = Object.fromEntries(BOOKING_SLOTS.map((slot) => [slot, String(args[slot] ?? "").toLowerCase()])) as Booking;
      return { ok: true, data: { status: name === "book_appointment" ? "booked" : "ok" } };
    },
  };
  const session = createRulesDialogueProvider({ now: () => NOW }).open({ agent: AGENT, context: {}, tools });
  const signal = new AbortController().signal;
  return {
    session,
    booked: () => booked,
    async say(line) {
      for await (const _event of session.respond(line, signal)) {
        // The reply is not needed: what it books and asks next is.
      }
    },
  };
}

/**
 * What the embedded dialogue books when a caller says `lines` in turn (whatever it asks in
 * between): the first book_appointment call's slots, or null when it books nothing.
 */
export async function bookingOf(lines: readonly string[]): Promise<Booking | null> {
  const dialogue = openEvalDialogue();
  for (const line of lines) await dialogue.say(line);
  return dialogue.booked();
}

/** What the agent expects before each of `lines` when the caller says them as written (the recognizer's hint for each). */
export async function expectationsOf(lines: readonly string[]): Promise<Array<ExpectedSpeech | null>> {
  const dialogue = openEvalDialogue();
  const expected: Array<ExpectedSpeech | null> = [];
  for (const line of lines) {
    expected.push(dialogue.session.expectedSpeech?.() ?? null);
    await dialogue.say(line);
  }
  return expected;
}
