import { spokenDate, spokenTime, type AgentSettings } from "../../engine/index.js";
import { dateParts, timeParts } from "../core/calendar.js";
import type { AppointmentRecord } from "../db/repositories/appointments.js";

/** The question a reminder call asks: the `rules` agent reads the answer to it (confirm, cancel or move). */
const QUESTION = "Will you be able to make it?";

/**
 * A reminder call's agent: it opens with the reminder instead of its usual greeting, the
 * agent's `metadata.reminder_message` when it has one (placeholders `{{customer_name}}`,
 * `{{service}}`, `{{appointment_date}}`, `{{appointment_time}}` and the metadata's own, filled
 * like `first_message`'s), else "Hi Ada, this is Ava from Acme Dental, calling to remind you of
 * your cleaning appointment on Tuesday, March 4 at 3:00 PM. Will you be able to make it?".
 * The spoken day and time go into the call's context for the placeholders.
 */
export function reminderCall(
  agent: AgentSettings,
  context: Record<string, unknown>,
  appointment: Pick<AppointmentRecord, "date" | "time" | "service" | "customer_name">,
  today: Date,
): { agent: AgentSettings; context: Record<string, unknown> } {
  const when = {
    appointment_date: spokenDate(dateParts(appointment.date), { year: today.getUTCFullYear(), month: today.getUTCMonth() + 1, day: today.getUTCDate() }),
    appointment_time: spokenTime(timeParts(appointment.time)),
  };
  const own = typeof agent.metadata.reminder_message === "string" && agent.metadata.reminder_message.trim() !== "" ? agent.metadata.reminder_message : null;
  const hi = appointment.customer_name ? `Hi ${appointment.customer_name.split(" ")[0]}` : "Hi";
  const business = typeof agent.metadata.business_name === "string" && agent.metadata.business_name.trim() !== "" ? ` from ${agent.metadata.business_name.trim()}` : "";
  const what = appointment.service ? `${appointment.service} appointment` : "appointment";
  const opening = own ?? `${hi}, this is ${agent.name}${business}, calling to remind you of your ${what} on ${when.appointment_date} at ${when.appointment_time}. ${QUESTION}`;
  return {
    agent: { ...agent, firstMessage: opening },
    context: { ...context, ...when, service: appointment.service, customer_name: appointment.customer_name },
  };
}
