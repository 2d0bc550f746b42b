import { spokenDate, spokenTime, type AgentSettings } from "../../engine/index.js";
import { dateParts, timeParts } from "../core/calendar.js";
import type { AppointmentRecord } from "../db/repositories/appointments.js";
import { spokenFirstName, spokenName, spokenService } from "./spoken-appointment.js";

/** The question a reminder call asks: the `rules` agent reads the answer to it (confirm, cancel or move). */
const QUESTION = "Will you be able to make it?";

/**
 * A reminder call's agent: it opens with the reminder instead of its usual greeting, the
 * agent's `metadata.reminder_message` when it has one (placeholders `{{customer_name}}`,
 * `{{service}}`, `{{appointment_date}}`, `{{appointment_time}}` and the metadata's own, filled
 * like `first_message`'s), else "Hi Ada, this is Ava from Acme Dental, calling to remind you of
 * your cleaning appointment on Tuesday, March 4 at 3:00 PM. Will you be able to make it?".
 * The spoken day and time go into the call's context for the placeholders. The customer's
 * name and the service are what the API may have written: the call, its placeholders and its
 * dialogue get them only as spoken-appointment.ts allows (else they are left unsaid).
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
  const service = spokenService(appointment.service, agent.metadata);
  const firstName = spokenFirstName(appointment.customer_name);
  const own = typeof agent.metadata.reminder_message === "string" && agent.metadata.reminder_message.trim() !== "" ? agent.metadata.reminder_message : null;
  const hi = firstName ? `Hi ${firstName}` : "Hi";
  const business = typeof agent.metadata.business_name === "string" && agent.metadata.business_name.trim() !== "" ? ` from ${agent.metadata.business_name.trim()}` : "";
  const what = service ? `${service} appointment` : "appointment";
  const opening = own ?? `${hi}, this is ${agent.name}${business}, calling to remind you of your ${what} on ${when.appointment_date} at ${when.appointment_time}. ${QUESTION}`;
  const storedAppointment = typeof context.appointment === "object" && context.appointment !== null ? context.appointment : {};
  return {
    agent: { ...agent, firstMessage: opening },
    context: { ...context, ...when, service, customer_name: spokenName(appointment.customer_name), appointment: { ...storedAppointment, date: appointment.date, time: appointment.time, service } },
  };
}
