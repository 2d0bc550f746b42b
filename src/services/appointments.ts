import { ApiError } from "../core/api-error.js";
import { isCalendarDate, isClockTime } from "../core/calendar.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import { AppointmentsRepository, type AppointmentFilters, type AppointmentRecord } from "../db/repositories/appointments.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { findOwned } from "./ownership.js";
import type { Outbox } from "./outbox.js";
import { appointmentEventData } from "./resource-event-data.js";
import { addDays, bookingRefusal, nearestFreeTimes, type BookingHours } from "./booking-calendar.js";
import { AgentsRepository } from "../db/repositories/agents.js";
import { reminderFields } from "./appointment-reminders.js";
import { grants, needsPermissionToo } from "./permissions.js";

/** What an appointment update may change (PATCH /v1/appointments/{id}, validated). */
export interface UpdateAppointmentInput {
  date?: string;
  time?: string;
  service?: string | null;
  duration_minutes?: number;
  notes?: string | null;
  customer_name?: string | null;
  customer_email?: string | null;
  customer_phone?: string | null;
}

export const APPOINTMENT_LIMITS = {
  minDurationMinutes: 5,
  maxDurationMinutes: 480,
  /** When the booking does not say how long. */
  defaultDurationMinutes: 30,
  name: 200,
  service: 200,
  notes: 2000,
} as const;

/** What the dialogue engine knows when it books; unknown fields stay null. */
export interface NewAppointment {
  account_id: string;
  call_id?: string | null;
  agent_id?: string | null;
  customer_name?: string | null;
  customer_phone?: string | null;
  customer_email?: string | null;
  /** YYYY-MM-DD */
  date: string;
  /** HH:MM, 24-hour */
  time: string;
  service?: string | null;
  duration_minutes?: number;
  notes?: string | null;
}

const NOT_FOUND = { code: "appointment_not_found", message: "No appointment with this id" };

/** Free times offered when a booking is refused. */
const OFFERED_TIMES = 2;
/** Appointments read to find free times: the asked day and the two weeks after. */
const BOOKING_LOOKAHEAD_DAYS = 15;

/**
 * What a booking came to: stored, or refused with the free times to offer (none when the
 * call has booked as many as one call may).
 */
export type BookingOutcome =
  | { booked: AppointmentRecord }
  | { refused: "slot_taken" | "outside_booking_hours"; alternatives: Array<{ date: string; time: string }> }
  | { refused: "booking_limit_reached"; alternatives: [] };

/** A new `scheduled` appointment; throws on values the dialogue should never have produced. */
function newAppointment(input: NewAppointment): AppointmentRecord {
  const duration = input.duration_minutes ?? APPOINTMENT_LIMITS.defaultDurationMinutes;
  // The caller extracted these from speech; a bad value is its bug, not the API client's.
  if (!isCalendarDate(input.date)) throw new Error(`appointment date must be YYYY-MM-DD, got '${input.date}'`);
  if (!isClockTime(input.time)) throw new Error(`appointment time must be HH:MM, got '${input.time}'`);
  if (!Number.isInteger(duration) || duration < APPOINTMENT_LIMITS.minDurationMinutes || duration > APPOINTMENT_LIMITS.maxDurationMinutes) {
    throw new Error(`appointment duration must be ${APPOINTMENT_LIMITS.minDurationMinutes} to ${APPOINTMENT_LIMITS.maxDurationMinutes} minutes, got ${duration}`);
  }
  const at = nowIso();
  return {
    id: newId("appointment"),
    account_id: input.account_id,
    call_id: input.call_id ?? null,
    agent_id: input.agent_id ?? null,
    customer_name: input.customer_name ?? null,
    customer_phone: input.customer_phone ?? null,
    customer_email: input.customer_email ?? null,
    date: input.date,
    time: input.time,
    service: input.service ?? null,
    duration_minutes: duration,
    notes: input.notes ?? null,
    status: "scheduled",
    reminder_at: null,
    reminder_status: null,
    reminder_call_id: null,
    confirmed_at: null,
    created_at: at,
    updated_at: at,
  };
}

/**
 * Appointments booked during calls: created by the dialogue engine (`create`), read,
 * rescheduled and cancelled through the API and on reminder calls; each change writes its
 * event with it, and plans the appointment's reminder (see appointment-reminders.ts).
 */
export class AppointmentsService {
  private readonly appointments: AppointmentsRepository;
  private readonly agents: AgentsRepository;
  private readonly changeListeners: Array<() => void> = [];

  constructor(
    private readonly db: Db,
    private readonly deps: {
      cursors: CursorCodec;
      outbox: Outbox;
      now: () => number;
      /** Most appointments one call may book (PARLEY_BOOKINGS_PER_CALL). */
      bookingsPerCall: number;
    },
  ) {
    this.appointments = new AppointmentsRepository(db);
    this.agents = new AgentsRepository(db);
  }

  /** Called after every change that may move a reminder (the reminder worker wakes). */
  onChanged(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  private changed(): void {
    for (const listener of this.changeListeners) listener();
  }

  /** Stores an appointment as given (no calendar check: see `book` for what a call books). */
  async create(input: NewAppointment): Promise<AppointmentRecord> {
    const appointment = newAppointment(input);
    await this.db.transaction().execute((trx) => this.store(appointment, trx));
    this.changed();
    return appointment;
  }

  /**
   * Books what a call asked for, if the agent's calendar allows it: inside its booking hours
   * and overlapping none of its scheduled appointments. Otherwise nothing is stored and the
   * nearest free times are returned to offer instead. A call that has booked
   * `bookingsPerCall` appointments (cancelled ones too) books no more. Checked and stored in
   * one transaction, so two calls cannot book the same time. `dryRun` (an agent test run):
   * checked the same way, but nothing is stored and no event written.
   */
  async book(input: NewAppointment & { agent_id: string }, hours: BookingHours, options: { dryRun?: boolean } = {}): Promise<BookingOutcome> {
    const appointment = newAppointment(input);
    const wanted = { date: appointment.date, time: appointment.time, duration_minutes: appointment.duration_minutes };
    return this.db.transaction().execute(async (trx): Promise<BookingOutcome> => {
      if (input.call_id && (await this.appointments.ofCall(input.call_id, trx)).length >= this.deps.bookingsPerCall) {
        return { refused: "booking_limit_reached", alternatives: [] };
      }
      const taken = await this.appointments.scheduledOfAgent(input.agent_id, wanted.date, addDays(wanted.date, BOOKING_LOOKAHEAD_DAYS), trx);
      const refusal = bookingRefusal(hours, taken, wanted);
      if (refusal) return { refused: refusal, alternatives: nearestFreeTimes(hours, taken, wanted, OFFERED_TIMES) };
      if (!options.dryRun) await this.store(appointment, trx);
      return { booked: appointment };
    }).finally(() => this.changed());
  }

  private async store(appointment: AppointmentRecord, trx: Db): Promise<void> {
    Object.assign(appointment, await this.reminderOf(appointment, trx));
    await this.appointments.insert(appointment, trx);
    await this.deps.outbox.append([{ accountId: appointment.account_id, name: "appointment.created", data: appointmentEventData(appointment, false) }], trx);
  }

  async get(accountId: string, id: string): Promise<AppointmentRecord> {
    return findOwned(await this.appointments.findById(id), accountId, NOT_FOUND);
  }

  list(accountId: string, filters: AppointmentFilters, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "appointments",
      filters: { ...filters },
      query,
      fetch: (page) => this.appointments.page(accountId, filters, page),
      count: () => this.appointments.count(accountId, filters),
      present: (row: AppointmentRecord) => row,
    });
  }

  /**
   * Changes the given fields; a cancelled appointment no longer changes. Moving it plans its
   * reminder for the new time. `permissions` are the calling key's: see `checkReminderCallChange`.
   */
  async update(accountId: string, id: string, input: UpdateAppointmentInput, permissions: readonly string[]): Promise<AppointmentRecord> {
    const current = await this.get(accountId, id);
    await this.checkReminderCallChange(current, input, permissions);
    const patch: Partial<AppointmentRecord> = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    patch.updated_at = nextUpdatedAt(current.updated_at);
    const next = await this.changeUnlessCancelled(current, patch, "appointment.updated");
    if (!next) throw new ApiError(409, "appointment_already_cancelled", "The appointment is cancelled and can no longer be changed");
    return next;
  }

  /**
   * A reminder call dials the appointment's `customer_phone` from the business's number at a
   * time set by its `date` and `time`: changing whom it dials (a new number), or when (a new
   * day or time, while the agent places reminder calls), is placing a call, so the key must
   * hold `calls:write` besides `appointments:write`. Clearing the number needs no more.
   */
  private async checkReminderCallChange(current: AppointmentRecord, input: UpdateAppointmentInput, permissions: readonly string[]): Promise<void> {
    if (grants(permissions, "calls:write")) return;
    if (input.customer_phone != null && input.customer_phone !== current.customer_phone) {
      throw needsPermissionToo("calls:write", ["customer_phone"], "a reminder call dials this number, so changing it");
    }
    const moved = (["date", "time"] as const).filter((field) => input[field] !== undefined && input[field] !== current[field]);
    if (moved.length === 0 || !current.agent_id) return;
    const agent = await this.agents.findAnyById(current.agent_id);
    if (agent?.reminder_call && agent.reminder_minutes_before !== null) {
      throw needsPermissionToo("calls:write", moved, "this agent places reminder calls, so moving the appointment (which moves its call)");
    }
  }

  async cancel(accountId: string, id: string): Promise<AppointmentRecord> {
    const next = await this.cancelled(await this.get(accountId, id));
    if (!next) throw new ApiError(409, "appointment_already_cancelled", "The appointment is already cancelled");
    return next;
  }

  /** Cancels (a pending reminder is skipped); null when it was cancelled already. */
  async cancelled(current: AppointmentRecord): Promise<AppointmentRecord | null> {
    const patch = { status: "cancelled" as const, updated_at: nextUpdatedAt(current.updated_at) };
    return this.changeUnlessCancelled(current, patch, "appointment.cancelled");
  }

  /** The customer confirmed they will come (on a reminder call); null when it was cancelled meanwhile. */
  async confirmed(current: AppointmentRecord): Promise<AppointmentRecord | null> {
    const at = nowIso();
    return this.changeUnlessCancelled(current, { confirmed_at: at, updated_at: nextUpdatedAt(current.updated_at) }, "appointment.updated");
  }

  /**
   * Moves an appointment to another day and time if its agent's calendar allows it, as a
   * booking is checked (the appointment itself aside); otherwise nothing changes and the
   * nearest free times are returned. A move clears an earlier confirmation and plans the
   * reminder for the new time.
   */
  async reschedule(current: AppointmentRecord, to: { date: string; time: string }, hours: BookingHours): Promise<BookingOutcome | { refused: "cancelled"; alternatives: [] }> {
    if (!isCalendarDate(to.date) || !isClockTime(to.time)) throw new Error(`reschedule needs YYYY-MM-DD and HH:MM, got '${to.date}' '${to.time}'`);
    const wanted = { date: to.date, time: to.time, duration_minutes: current.duration_minutes };
    const outcome = await this.db.transaction().execute(async (trx): Promise<BookingOutcome | { refused: "cancelled"; alternatives: [] }> => {
      const taken = current.agent_id ? await this.appointments.scheduledOfAgent(current.agent_id, to.date, addDays(to.date, BOOKING_LOOKAHEAD_DAYS), trx, current.id) : [];
      const refusal = bookingRefusal(hours, taken, wanted);
      if (refusal) return { refused: refusal, alternatives: nearestFreeTimes(hours, taken, wanted, OFFERED_TIMES) };
      const patch = { date: to.date, time: to.time, confirmed_at: null, updated_at: nextUpdatedAt(current.updated_at) };
      const moved = await this.applyUnlessCancelled(current, patch, "appointment.updated", trx);
      return moved ? { booked: moved } : { refused: "cancelled", alternatives: [] };
    });
    this.changed();
    return outcome;
  }

  /** Applies `patch` with its event in its own transaction (see `applyUnlessCancelled`). */
  private async changeUnlessCancelled(current: AppointmentRecord, patch: Partial<AppointmentRecord>, name: "appointment.updated" | "appointment.cancelled"): Promise<AppointmentRecord | null> {
    if (current.status === "cancelled") return null;
    const next = await this.db.transaction().execute((trx) => this.applyUnlessCancelled(current, patch, name, trx));
    this.changed();
    return next;
  }

  /**
   * Applies `patch` with its event, unless the appointment was cancelled meanwhile (null then,
   * and no event). A new day or time plans the reminder again; a cancellation skips it.
   */
  private async applyUnlessCancelled(current: AppointmentRecord, patch: Partial<AppointmentRecord>, name: "appointment.updated" | "appointment.cancelled", trx: Db): Promise<AppointmentRecord | null> {
    const next = { ...current, ...patch };
    if (next.status === "cancelled") Object.assign(next, current.reminder_status === "pending" ? { reminder_status: "skipped" } : {});
    else if (next.date !== current.date || next.time !== current.time) Object.assign(next, await this.reminderOf(next, trx));
    const { id: _id, ...changes } = next;
    if (!(await this.appointments.updateUnlessCancelled(current.id, changes, trx))) return null;
    await this.deps.outbox.append([{ accountId: next.account_id, name, data: appointmentEventData(next, true) }], trx);
    return next;
  }

  /** The reminder an appointment of this day and time gets from its agent's settings. */
  private async reminderOf(appointment: AppointmentRecord, trx: Db): Promise<Pick<AppointmentRecord, "reminder_at" | "reminder_status" | "reminder_call_id">> {
    const agent = appointment.agent_id ? await this.agents.findAnyById(appointment.agent_id, trx) : undefined;
    return reminderFields(appointment, agent, this.deps.now());
  }
}
