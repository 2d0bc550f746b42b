import type { AgentRecord } from "../db/repositories/agents.js";
import type { AppointmentRecord } from "../db/repositories/appointments.js";
import type { PhoneNumberRecord } from "../db/repositories/phone-numbers.js";

/**
 * What the events about agents, phone numbers and appointments carry in `data`: plain
 * objects built here, so the events do not depend on how the HTTP layer presents resources.
 */

/** An agent as `GET /v1/agents` lists it, plus its metadata. */
export function agentEventData(agent: AgentRecord): Record<string, unknown> {
  return {
    id: agent.id,
    name: agent.name,
    voice_id: agent.voice_id,
    language: agent.language,
    model: agent.model,
    status: agent.status,
    metadata: agent.metadata,
    created_at: agent.created_at,
    updated_at: agent.updated_at,
  };
}

/** A phone number as the API shows it. */
export function phoneNumberEventData(number: PhoneNumberRecord): Record<string, unknown> {
  return {
    id: number.id,
    phone_number: number.phone_number,
    friendly_name: number.friendly_name,
    country: number.country,
    status: number.status,
    default_agent_id: number.default_agent_id,
    updated_at: number.updated_at,
  };
}

/** Exactly the reference's `appointment.created` payload; the other appointment events add `status`. */
export function appointmentEventData(appointment: AppointmentRecord, withStatus: boolean): Record<string, unknown> {
  return {
    appointment_id: appointment.id,
    call_id: appointment.call_id,
    customer_name: appointment.customer_name,
    customer_phone: appointment.customer_phone,
    customer_email: appointment.customer_email,
    date: appointment.date,
    time: appointment.time,
    service: appointment.service,
    duration_minutes: appointment.duration_minutes,
    notes: appointment.notes,
    ...(withStatus ? { status: appointment.status, confirmed_at: appointment.confirmed_at } : {}),
  };
}
