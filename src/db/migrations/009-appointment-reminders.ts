import { sql, type Kysely } from "kysely";

/**
 * Appointment reminders. Agents say how long before each appointment its reminder goes
 * (`reminder_minutes_before`, null for none) and whether Parley also calls the customer then
 * (`reminder_call`). Appointments keep when their reminder is due (ms since the epoch, the
 * agent's time zone applied), whether it is `pending`, `sent` or `skipped`, the reminder call
 * placed, and when the customer confirmed. Calls know the appointment a reminder call is
 * about. Appointments booked before this migration get no reminder (none was promised).
 * Indexes for the calendar check and for a call's appointments.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("agents").addColumn("reminder_minutes_before", "integer", (c) => c.defaultTo(1440)).execute();
  await db.schema.alterTable("agents").addColumn("reminder_call", "integer", (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable("appointments").addColumn("reminder_at", "integer").execute();
  await db.schema.alterTable("appointments").addColumn("reminder_status", "text").execute();
  await db.schema.alterTable("appointments").addColumn("reminder_call_id", "text").execute();
  await db.schema.alterTable("appointments").addColumn("confirmed_at", "text").execute();
  await sql`CREATE INDEX appointments_reminder_due ON appointments (reminder_at) WHERE reminder_status = 'pending'`.execute(db);
  // The calendar check of bookings and moves reads an agent's scheduled appointments by date;
  // a call's appointments are read when its analysis is rebuilt.
  await db.schema.createIndex("appointments_agent_status_date").on("appointments").columns(["agent_id", "status", "date"]).execute();
  await db.schema.createIndex("appointments_call").on("appointments").columns(["call_id"]).execute();
  await db.schema.alterTable("calls").addColumn("appointment_id", "text").execute();
}
