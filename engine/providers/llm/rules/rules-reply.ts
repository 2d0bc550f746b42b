import type { ToolResult } from "../../../tools.js";
import type { DialogueEvent } from "../dialogue-provider.js";
import type { BookingSlot } from "./booking-draft.js";

/**
 * What the agent's last question asked for: it decides how a short answer ("yes", "john
 * smith") reads. `reminder` and `reminder_change` are a reminder call's questions ("Will you
 * be able to make it?", "cancel it, or move it?"); `intent_slot` an intent's question for one
 * of its tool's arguments.
 */
export type Expectation = BookingSlot | "confirmation" | "change" | "anything_else" | "transfer_offer" | "reminder" | "reminder_change" | "intent_slot";

/** One planned agent turn of the `rules` dialogue. */
export interface Reply {
  /**
   * A tool run before anything is said; the reply is then what `then` makes of its result (the
   * agent says "booked" only once the booking is stored).
   */
  tool?: { name: string; arguments: Record<string, unknown>; then: (result: ToolResult) => Reply };
  sentences: readonly string[];
  /** What the last sentence asks; armed only once that sentence has gone out. */
  expects: Expectation | null;
  /** Sent after the text. */
  action?: Extract<DialogueEvent, { type: "transfer" | "end_call" | "handoff" }>;
  /** What the reply did, for the call's analysis: sent after the text, before the action. */
  note?: Extract<DialogueEvent, { type: "answered_question" | "callback_requested" }>;
  /** This turn did not understand the caller. */
  missed?: boolean;
}
