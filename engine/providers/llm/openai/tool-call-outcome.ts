import type { AgentSettings } from "../../../types.js";
import type { DialogueEvent } from "../dialogue-provider.js";
import { checkBookingArguments } from "./booking-arguments.js";
import type { ChatToolCall } from "./chat-completions-wire.js";
import type { DialogueToolName } from "./dialogue-tools.js";

/** What one finished tool call means for the call, and what the model is told about it. */
export interface ToolCallOutcome {
  /** What the call session receives; null when the call was refused (the model reads why). */
  event: DialogueEvent | null;
  /** The `tool` message content the model reads on its next request. */
  result: Record<string, unknown>;
  /** Transfer and hang-up finish the turn: the model is not asked for more. */
  endsTurn: boolean;
}

/**
 * Reads a tool call the model made. Arguments that are not a JSON object (cut off by
 * `max_tokens`, or plain malformed) are not acted on: the call is refused with an error
 * result, and the model may try again or carry on talking.
 */
export function toolCallOutcome(call: ChatToolCall, agent: AgentSettings): ToolCallOutcome {
  const args = parseArguments(call.function.arguments);
  if (!args) return refused("the arguments were not a valid JSON object");
  switch (call.function.name as DialogueToolName) {
    case "book_appointment": {
      const booking = checkBookingArguments(args);
      if (!booking.ok) return refused(booking.problem);
      return {
        event: { type: "tool_call", name: "book_appointment", arguments: { ...booking.arguments } },
        result: { status: "booked" },
        endsTurn: false,
      };
    }
    case "transfer_call":
      // Only offered when transfer is enabled; a model may still invent the call.
      if (!agent.transferEnabled) return refused("transfer is not available on this line");
      return { event: { type: "transfer" }, result: { status: "transferring" }, endsTurn: true };
    case "do_not_call":
      // Listed at once; the model goes on to confirm and hang up (end_call, reason do_not_call).
      return { event: { type: "tool_call", name: "do_not_call", arguments: {} }, result: { status: "listed" }, endsTurn: false };
    case "end_call": {
      const reason = typeof args.reason === "string" && args.reason.trim() !== "" ? args.reason.trim() : "agent_ended";
      return { event: { type: "end_call", reason }, result: { status: "ending" }, endsTurn: true };
    }
    default:
      return refused(`there is no tool named ${call.function.name}`);
  }
}

function refused(problem: string): ToolCallOutcome {
  return { event: null, result: { status: "error", error: problem }, endsTurn: false };
}

/** Tools without parameters may come with empty arguments rather than `{}`. */
function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
