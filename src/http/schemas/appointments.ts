import { z } from "zod";
import { isCalendarDate, isClockTime } from "../../core/calendar.js";
import { APPOINTMENT_STATUSES } from "../../db/repositories/appointments.js";
import { APPOINTMENT_LIMITS } from "../../services/appointments.js";
import { REMINDER_STATUSES } from "../../services/appointment-reminders.js";
import { e164, listEnvelope, listQueryShape } from "./common.js";
import type { UpdateAppointmentInput } from "../../services/appointments.js";

const L = APPOINTMENT_LIMITS;
const durationMessage = `must be an integer from ${L.minDurationMinutes} to ${L.maxDurationMinutes}`;

const calendarDate = z
  .string({ error: "must be a date YYYY-MM-DD" })
  .refine(isCalendarDate, { message: "must be a date YYYY-MM-DD that exists, like 2026-03-01" });

const text = (max: number) =>
  z
    .string({ error: "must be a string or null" })
    .max(max, { message: `must be at most ${max} characters` })
    .refine((s) => s.trim().length > 0, { message: "must not be empty (null clears it)" })
    .nullable();

export const updateAppointmentBody = z
  .object({
    date: calendarDate.optional(),
    time: z.string({ error: "must be a time HH:MM" }).refine(isClockTime, { message: "must be a time HH:MM from 00:00 to 23:59" }).optional(),
    service: text(L.service).optional(),
    duration_minutes: z
      .number({ error: durationMessage })
      .int({ message: durationMessage })
      .min(L.minDurationMinutes, { message: durationMessage })
      .max(L.maxDurationMinutes, { message: durationMessage })
      .optional(),
    notes: text(L.notes).optional(),
    customer_name: text(L.name).optional(),
    customer_email: z.email({ error: "must be an email address or null" }).max(254, { message: "must be at most 254 characters" }).nullable().optional(),
    customer_phone: e164("customer_phone").nullable().optional(),
  })
  .strict();


export const listAppointmentsQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(APPOINTMENT_STATUSES, { error: `must be one of ${APPOINTMENT_STATUSES.join(", ")}` }).optional(),
    call_id: z.string().min(1, { message: "must not be empty" }).optional(),
    from_date: calendarDate.optional(),
    to_date: calendarDate.optional(),
  })
  .strict();

/** The appointment: the fields of the `appointment.created` payload plus its own bookkeeping. */
export const appointmentSchema = z.object({
  id: z.string(),
  call_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  customer_name: z.string().nullable(),
  customer_phone: z.string().nullable(),
  customer_email: z.string().nullable(),
  date: z.string(),
  time: z.string(),
  service: z.string().nullable(),
  duration_minutes: z.number().int(),
  notes: z.string().nullable(),
  status: z.enum(APPOINTMENT_STATUSES),
  confirmed_at: z.string().nullable().describe("when the customer confirmed on a reminder call"),
  reminder_at: z.string().nullable().describe("when its reminder is (or was) due; null: none"),
  reminder_status: z.enum(REMINDER_STATUSES).nullable(),
  reminder_call_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const appointmentListSchema = listEnvelope(appointmentSchema);

// The bodies validate into what the service takes (its input types are its own).
updateAppointmentBody satisfies z.ZodType<UpdateAppointmentInput>;
