import type { CallAction } from "../call-events.js";
import type { AnalysisInput, CallOutcome, FieldValue } from "./call-analysis.js";

/** The tools that book or change an appointment. */
const APPOINTMENT_TOOLS = ["book_appointment", "reschedule_appointment", "cancel_appointment", "confirm_appointment"] as const;

/** What the agent's actions establish about a call, whoever reads the conversation. */
export interface CallFacts {
  outcome: CallOutcome;
  /** The appointment the call booked, confirmed, moved or cancelled (the last such action), as `extracted_data` reports it; null when none. */
  booking: Record<string, FieldValue> | null;
  /** The day and time the caller asked to be called back at, when they asked. */
  callback: { date: string | null; time: string | null } | null;
  /** The questions the agent answered (FAQ entries). */
  answered: string[];
}

/**
 * The outcome from what the agent did, first match wins:
 * 1. `do_not_call`: the callee's number was listed (tool `do_not_call`), or the call ended for it;
 * 2. `transferred`: the call was handed to a person;
 * 3. `voicemail_left`: the agent left a message on an answering machine;
 * 4. on a reminder call, what became of the appointment: `appointment_rescheduled`,
 *    `appointment_cancelled`, `appointment_confirmed` (tools `reschedule_appointment`,
 *    `cancel_appointment`, `confirm_appointment` succeeded), in that order;
 * 5. `appointment_booked`: a booking was stored (tool `book_appointment` succeeded);
 * 6. `callback_requested`: the agent agreed to call back;
 * 7. `not_interested`: the agent ended the call because the callee declined;
 * 8. `information_provided`: the agent answered a question;
 * 9. `no_action`: none of these.
 * Only what really happened counts: a refused or failed booking is no booking.
 */
export function readCallFacts(input: Pick<AnalysisInput, "actions" | "endReason" | "transferred" | "farEndNumber">): CallFacts {
  const { actions } = input;
  const succeeded = (name: string) => actions.filter((a): a is Extract<CallAction, { type: "tool_call" }> => a.type === "tool_call" && a.name === name && a.result.ok);
  const endedFor = (reason: string) => actions.some((a) => a.type === "end_call" && a.reason === reason);
  const booked = succeeded("book_appointment").at(-1);
  const [moved, cancelled, confirmed] = ["reschedule_appointment", "cancel_appointment", "confirm_appointment"].map((name) => succeeded(name).at(-1));
  // The appointment's details come from the last tool that acted on it.
  const lastTouched = actions.findLast(
    (a): a is Extract<CallAction, { type: "tool_call" }> => a.type === "tool_call" && a.result.ok && (APPOINTMENT_TOOLS as readonly string[]).includes(a.name),
  );
  const callback = actions.filter((a) => a.type === "callback_requested").at(-1);
  const answered = actions.flatMap((a) => (a.type === "answered_question" ? [a.question] : []));

  let outcome: CallOutcome;
  if (succeeded("do_not_call").length > 0 || input.endReason === "do_not_call") outcome = "do_not_call";
  else if (input.transferred || actions.some((a) => a.type === "transfer")) outcome = "transferred";
  else if (input.endReason === "voicemail" || endedFor("voicemail")) outcome = "voicemail_left";
  else if (moved) outcome = "appointment_rescheduled";
  else if (cancelled) outcome = "appointment_cancelled";
  else if (confirmed) outcome = "appointment_confirmed";
  else if (booked) outcome = "appointment_booked";
  else if (callback || endedFor("callback_requested")) outcome = "callback_requested";
  else if (endedFor("not_interested")) outcome = "not_interested";
  else if (answered.length > 0) outcome = "information_provided";
  else outcome = "no_action";

  return {
    outcome,
    booking: lastTouched ? bookingData(lastTouched, input.farEndNumber) : null,
    callback: callback ? { date: callback.date, time: callback.time } : null,
    answered,
  };
}

function bookingData(call: Extract<CallAction, { type: "tool_call" }>, farEndNumber: string | null): Record<string, FieldValue> {
  const data = call.result.ok ? call.result.data : {};
  const text = (value: unknown): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);
  return {
    appointment_id: text(data.appointment_id),
    appointment_date: text(data.date) ?? text(call.arguments.date),
    appointment_time: text(data.time) ?? text(call.arguments.time),
    service: text(data.service) ?? text(call.arguments.service),
    customer_name: text(data.customer_name) ?? text(call.arguments.customer_name),
    customer_email: text(data.customer_email) ?? text(call.arguments.customer_email),
    customer_phone: farEndNumber,
  };
}
