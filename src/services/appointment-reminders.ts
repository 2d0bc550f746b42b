import type { Logger } from "pino";
import { REMINDER_PURPOSE } from "../../engine/index.js";
import { dateParts, timeParts } from "../core/calendar.js";
import { newId } from "../core/ids.js";
import { PassLoop } from "../core/pass-loop.js";
import { nowIso } from "../core/time.js";
import { knownZone, localToUtc } from "../core/zoned-time.js";
import type { Db } from "../db/database.js";
import { literalLimit } from "../db/literal-limit.js";
import { AgentsRepository, type AgentRecord } from "../db/repositories/agents.js";
import type { AppointmentRecord } from "../db/repositories/appointments.js";
import { CallsRepository, unfinishedCallFields, type CallRecord } from "../db/repositories/calls.js";
import { PhoneNumbersRepository } from "../db/repositories/phone-numbers.js";
import { MAX_CALL_DURATION_SECONDS } from "./call-limits.js";
import type { AccountsService } from "./accounts.js";
import type { DestinationPolicy } from "./destination-policy.js";
import type { DoNotCallService } from "./do-not-call.js";
import type { Outbox } from "./outbox.js";
import { appointmentEventData } from "./resource-event-data.js";
import { nextReminderCallOpening } from "./reminder-calling-hours.js";

export const REMINDER_STATUSES = ["pending", "sent", "skipped"] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];

/** Reminders claimed per transaction. */
const BATCH = 50;
/** The longest the worker sleeps when nothing wakes it (a reminder is due, an appointment changed). */
const MAX_SLEEP_MS = 30_000;
const MINUTE_MS = 60_000;

/**
 * When an appointment's reminder is due: `reminder_minutes_before` its start, read in the
 * agent's `metadata.timezone` (default UTC). Null when there is none: the agent sends no
 * reminders, the appointment is not scheduled, or the time has passed already (an
 * appointment booked within its lead time gets no reminder).
 */
export function reminderDue(
  appointment: Pick<AppointmentRecord, "date" | "time" | "status">,
  agent: Pick<AgentRecord, "reminder_minutes_before" | "metadata"> | undefined,
  nowMs: number,
): number | null {
  if (!agent || agent.reminder_minutes_before === null || appointment.status !== "scheduled") return null;
  const due = appointmentStart(appointment, agent) - agent.reminder_minutes_before * MINUTE_MS;
  return due > nowMs ? due : null;
}

/** When an appointment starts: its date and time in the agent's `metadata.timezone` (default UTC). */
function appointmentStart(appointment: Pick<AppointmentRecord, "date" | "time">, agent: Pick<AgentRecord, "metadata">): number {
  const { year, month, day } = dateParts(appointment.date);
  const { hour, minute } = timeParts(appointment.time);
  return localToUtc(knownZone(agent.metadata.timezone) ?? "UTC", year, month, day, hour * 60 + minute);
}

/** The reminder fields of an appointment booked, moved or re-planned now. */
export function reminderFields(
  appointment: Pick<AppointmentRecord, "date" | "time" | "status">,
  agent: Pick<AgentRecord, "reminder_minutes_before" | "metadata"> | undefined,
  nowMs: number,
): Pick<AppointmentRecord, "reminder_at" | "reminder_status" | "reminder_call_id"> {
  const due = reminderDue(appointment, agent, nowMs);
  return { reminder_at: due, reminder_status: due === null ? null : "pending", reminder_call_id: null };
}

/**
 * Sends appointment reminders: at each pending reminder's time, `appointment.reminder` (once:
 * the claim, the event and the reminder call are one transaction, so neither a crash nor a
 * second process sends it twice), and with the agent's `reminder_call`, a queued outbound call
 * to the customer that the dispatcher places like any other (under the account's
 * concurrent-call limit). A reminder whose call would ring outside the callee's calling hours
 * waits for their next opening when that comes before the appointment (see
 * reminder-calling-hours.ts). A reminder of an appointment cancelled meanwhile is `skipped`.
 * Due reminders a stopped process missed go at the next start.
 */
export class AppointmentReminders {
  private readonly agents: AgentsRepository;
  private readonly loop: PassLoop;

  constructor(
    private readonly db: Db,
    private readonly config: { now: () => number },
    private readonly deps: {
      outbox: Outbox;
      accounts: AccountsService;
      destinations: DestinationPolicy;
      doNotCall: DoNotCallService;
      /** Told of each account a reminder call was queued for (the dispatcher places it). */
      queued: (accountId: string) => void;
      logger: Logger;
    },
  ) {
    this.agents = new AgentsRepository(db);
    this.loop = new PassLoop({
      pass: () => this.pass(),
      next: () => this.untilNextDue(),
      onError: (err) => this.deps.logger.error({ err }, "appointment reminders: pass failed; trying again"),
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Stops; a pass under way finishes first. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Looks for due reminders now (an appointment changed, or tests moved the clock). */
  wake(): void {
    this.loop.wake();
  }

  /** Resolves once no pass is under way or requested. */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  /** Re-plans the pending reminders of the agent's scheduled appointments after its reminder settings or time zone changed. */
  async replanAgent(agent: AgentRecord, trx: Db): Promise<void> {
    const open = await trx
      .selectFrom("appointments")
      .selectAll()
      .where("agent_id", "=", agent.id)
      .where("status", "=", "scheduled")
      .where((eb) => eb.or([eb("reminder_status", "=", "pending"), eb("reminder_status", "is", null)]))
      .execute();
    const now = this.config.now();
    for (const appointment of open) {
      const fields = reminderFields({ ...appointment, status: "scheduled" }, agent, now);
      await trx.updateTable("appointments").set(fields).where("id", "=", appointment.id).execute();
    }
  }

  /** Until the next pending reminder is due, at most MAX_SLEEP_MS. */
  private async untilNextDue(): Promise<number> {
    const next = await this.db.selectFrom("appointments").select((eb) => eb.fn.min("reminder_at").as("at")).where("reminder_status", "=", "pending").executeTakeFirst();
    return next?.at == null ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, Number(next.at) - this.config.now()));
  }

  private async pass(): Promise<void> {
    for (;;) {
      const accounts = new Set<string>();
      const claimed = await this.db.transaction().execute(async (trx) => {
        const due = await trx
          .selectFrom("appointments")
          .selectAll()
          .where("reminder_status", "=", "pending")
          .where("reminder_at", "<=", this.config.now())
          // Due together: the older booking first (an explicit order: PostgreSQL keeps none of its own for ties).
          .orderBy("reminder_at")
          .orderBy("created_at")
          .orderBy("id")
          .limit(literalLimit(BATCH))
          .execute();
        for (const row of due) {
          const appointment = row as AppointmentRecord;
          if (await this.send(appointment, trx)) accounts.add(appointment.account_id);
        }
        return due.length;
      });
      for (const accountId of accounts) this.deps.queued(accountId);
      if (claimed < BATCH || this.loop.stopped) return;
    }
  }

  /**
   * Claims one due reminder and sends it; true when a reminder call was queued. A reminder
   * whose call must wait for calling hours goes back to `pending` at their opening instead.
   */
  private async send(appointment: AppointmentRecord, trx: Db): Promise<boolean> {
    const status: ReminderStatus = appointment.status === "scheduled" ? "sent" : "skipped";
    const claim = await trx.updateTable("appointments").set({ reminder_status: status }).where("id", "=", appointment.id).where("reminder_status", "=", "pending").executeTakeFirst();
    if (claim.numUpdatedRows === 0n || status === "skipped") return false;
    const agent = appointment.agent_id ? await this.agents.findAnyById(appointment.agent_id, trx) : undefined;
    const call = agent?.reminder_call ? await this.reminderCall(appointment, agent, trx) : null;
    if (call && "waitUntil" in call) {
      await trx.updateTable("appointments").set({ reminder_status: "pending", reminder_at: call.waitUntil }).where("id", "=", appointment.id).execute();
      return false;
    }
    if (call && "id" in call) await trx.updateTable("appointments").set({ reminder_call_id: call.id }).where("id", "=", appointment.id).execute();
    await this.deps.outbox.append(
      [
        {
          accountId: appointment.account_id,
          name: "appointment.reminder",
          data: {
            ...appointmentEventData(appointment, true),
            reminder_minutes_before: agent?.reminder_minutes_before ?? null,
            call_id: call && "id" in call ? call.id : null,
            ...(call && "refused" in call ? { call_not_placed: call.refused } : {}),
          },
        },
      ],
      trx,
    );
    return call !== null && "id" in call;
  }

  /**
   * The reminder call to the customer, queued (the dispatcher checks credit, destination, the
   * do-not-call list and calling hours again when it dials); or why it cannot be placed: no
   * customer phone, the agent is inactive or deleted, the number is the caller ID an inbound
   * caller booked with and the agent does not call those (`reminder_call_inbound`), the account
   * has no active number to call from, the number is not one the account may call or is on its
   * do-not-call list, the queue is full, or the callee's calling hours are closed now and do not
   * open before the appointment. When they open before it: the instant to wait for.
   */
  private async reminderCall(appointment: AppointmentRecord, agent: AgentRecord, trx: Db): Promise<CallRecord | { refused: string } | { waitUntil: number }> {
    const accountId = appointment.account_id;
    const phone = appointment.customer_phone;
    if (!phone) return { refused: "no_customer_phone" };
    if (agent.deleted_at !== null || agent.status !== "active") return { refused: "agent_inactive" };
    if (!agent.reminder_call_inbound && (await this.isInboundCallerId(appointment, phone, trx))) return { refused: "inbound_caller_id" };
    const from = await new PhoneNumbersRepository(trx).oldestActive(accountId, trx);
    if (!from) return { refused: "invalid_from_number" };
    if (!(await this.deps.destinations.permits(accountId, phone, trx))) return { refused: "invalid_phone_number" };
    if (await this.deps.doNotCall.isListed(accountId, phone, trx)) return { refused: "do_not_call" };
    const account = await this.deps.accounts.find(accountId, trx);
    const calls = new CallsRepository(trx);
    if (!account || (await calls.countInStatus(accountId, "queued", trx)) >= this.deps.accounts.limitsOf(account).queuedCalls) return { refused: "rate_limit_exceeded" };
    // The next opening is now itself while the hours are open.
    const now = this.config.now();
    const opening = nextReminderCallOpening(phone, agent.metadata, now);
    if (opening !== now) return opening !== null && opening < appointmentStart(appointment, agent) ? { waitUntil: opening } : { refused: "outside_calling_hours" };
    const at = nowIso();
    const call: CallRecord = {
      id: newId("call"),
      account_id: accountId,
      agent_id: agent.id,
      campaign_id: null,
      contact_id: null,
      direction: "outbound",
      status: "queued",
      phone_number: phone,
      from_number: from.phone_number,
      metadata: { purpose: REMINDER_PURPOSE, appointment_id: appointment.id },
      context: {
        purpose: REMINDER_PURPOSE,
        customer_name: appointment.customer_name,
        appointment: { id: appointment.id, date: appointment.date, time: appointment.time, service: appointment.service },
      },
      record: true,
      max_duration: MAX_CALL_DURATION_SECONDS,
      webhook_url: null,
      ...unfinishedCallFields(),
      appointment_id: appointment.id,
      created_at: at,
      answered_at: null,
      updated_at: at,
    };
    await calls.insert(call, trx);
    return call;
  }

  /**
   * Whether `phone` is the caller ID the customer booked with on an inbound call: anyone can
   * send any caller ID, so calling it back would let a stranger make the business call a
   * number of their choosing.
   */
  private async isInboundCallerId(appointment: AppointmentRecord, phone: string, trx: Db): Promise<boolean> {
    if (!appointment.call_id) return false;
    const booking = await new CallsRepository(trx).findById(appointment.call_id, trx);
    return booking?.direction === "inbound" && booking.from_number === phone;
  }
}
