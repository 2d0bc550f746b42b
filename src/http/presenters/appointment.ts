import type { AppointmentRecord } from "../../db/repositories/appointments.js";

export function presentAppointment(appointment: AppointmentRecord) {
  return {
    id: appointment.id,
    call_id: appointment.call_id,
    agent_id: appointment.agent_id,
    customer_name: appointment.customer_name,
    customer_phone: appointment.customer_phone,
    customer_email: appointment.customer_email,
    date: appointment.date,
    time: appointment.time,
    service: appointment.service,
    duration_minutes: appointment.duration_minutes,
    notes: appointment.notes,
    status: appointment.status,
    confirmed_at: appointment.confirmed_at,
    reminder_at: appointment.reminder_at === null ? null : new Date(appointment.reminder_at).toISOString(),
    reminder_status: appointment.reminder_status,
    reminder_call_id: appointment.reminder_call_id,
    created_at: appointment.created_at,
    updated_at: appointment.updated_at,
  };
}
