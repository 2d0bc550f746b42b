import type { ToolResult } from "../../../tools.js";
import { compareDates, isoDate, isoTime, type CalendarDate, type ClockTime } from "./calendar.js";
import { isCancelRequest, type YesNo } from "./caller-intents.js";
import { findDateTime } from "./date-time-extraction.js";
import { offerFreeTimes } from "./free-times.js";
import { LINES } from "./reply-lines.js";
import type { Reply } from "./rules-reply.js";
import { spokenDate, spokenTime } from "./spoken-date-time.js";
import { hasAnyPhrase, type Utterance } from "./utterance.js";
import type { WallClock } from "./wall-clock.js";

/** The call's `context.purpose` on a reminder call the control plane placed. */
export const REMINDER_PURPOSE = "appointment_reminder";

/** The appointment a reminder call is about, from the call's `context.appointment`. */
export interface ReminderAppointment {
  date: CalendarDate;
  time: ClockTime;
  service: string | null;
}

/** The reminder's appointment when the call is a reminder call (`context.purpose`, `context.appointment` {date, time, service}); else null. */
export function readReminder(context: Record<string, unknown>): ReminderAppointment | null {
  const appointment = context.appointment;
  if (context.purpose !== REMINDER_PURPOSE || typeof appointment !== "object" || appointment === null) return null;
  const { date, time, service } = appointment as Record<string, unknown>;
  const d = typeof date === "string" ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(date) : null;
  const t = typeof time === "string" ? /^(\d{2}):(\d{2})$/.exec(time) : null;
  if (!d || !t) return null;
  return {
    date: { year: +d[1]!, month: +d[2]!, day: +d[3]! },
    time: { hour: +t[1]!, minute: +t[2]! },
    service: typeof service === "string" && service.trim() !== "" ? service.trim() : null,
  };
}

const WILL_COME = ["i will be there", "i will come", "i can make it", "i will make it", "see you then", "see you there", "that works", "still works"] as const;
const CANNOT_COME = ["cannot make it", "can not make it", "will not make it", "not make it", "not be able", "cannot come", "will not be there"] as const;

/**
 * The `rules` agent on a reminder call. The call opens with the reminder and "Will you be able
 * to make it?" (the control plane's first message); the customer's answer then confirms
 * (tool `confirm_appointment`), cancels (`cancel_appointment`) or moves the appointment to the
 * day and time they say (`reschedule_appointment`; a taken time gets the nearest free ones),
 * and the agent says what really happened and says goodbye. A plain "no" asks whether to
 * cancel or move it. The tools act on the call's own appointment only: they take no id.
 */
export class ReminderConversation {
  /** The day last asked for: after a refusal, "four thirty" means that day. */
  private askedDate: CalendarDate | null = null;

  constructor(
    private readonly appointment: ReminderAppointment,
    private readonly goodbye: readonly string[],
  ) {}

  /** Puts the conversation back as it is now. */
  saveState(): () => void {
    const askedDate = this.askedDate;
    return () => (this.askedDate = askedDate);
  }

  /** The question the agent repeats after a misunderstanding. */
  question(expecting: "reminder" | "reminder_change"): string {
    return expecting === "reminder" ? LINES.willYouMakeIt : LINES.cancelOrMove.at(-1)!;
  }

  /** The reply to the customer's words while a reminder question is open; null when they do not answer it. */
  answer(utterance: Utterance, expecting: "reminder" | "reminder_change", answer: YesNo | null, now: WallClock): Reply | null {
    if (isCancelRequest(utterance)) return this.cancel(now);
    const said = findDateTime(utterance.text, now, { timeExpected: expecting === "reminder_change" });
    if (said.date || said.time) {
      const date = said.date ?? this.askedDate ?? this.appointment.date;
      if (compareDates(date, now.date) < 0) return { sentences: [...LINES.pastDay, this.question("reminder_change")], expects: "reminder_change" };
      return this.move(date, said.time ?? this.appointment.time, now);
    }
    if (hasAnyPhrase(utterance, CANNOT_COME)) return { sentences: LINES.cancelOrMove, expects: "reminder_change" };
    if (expecting === "reminder" && (answer === "yes" || hasAnyPhrase(utterance, WILL_COME))) return this.confirm(now);
    if (answer === "no") return { sentences: LINES.cancelOrMove, expects: "reminder_change" };
    return null;
  }

  private confirm(now: WallClock): Reply {
    const then = (result: ToolResult): Reply =>
      result.ok
        ? this.ending(["Great, thank you.", `We'll see you on ${this.when(this.appointment.date, this.appointment.time, now)}.`], "appointment_confirmed")
        : this.ending(["I'm sorry, I couldn't note that just now, but your appointment stays as it is."], "agent_ended");
    return { tool: { name: "confirm_appointment", arguments: {}, then }, sentences: [], expects: null };
  }

  private cancel(now: WallClock): Reply {
    const then = (result: ToolResult): Reply =>
      result.ok
        ? this.ending([`All right, I've cancelled your ${this.service()} on ${spokenDate(this.appointment.date, now.date)}.`, "Thank you for letting us know."], "appointment_cancelled")
        : this.ending(["I'm sorry, I wasn't able to cancel it just now.", "Please call us to cancel it."], "agent_ended");
    return { tool: { name: "cancel_appointment", arguments: {}, then }, sentences: [], expects: null };
  }

  private move(date: CalendarDate, time: ClockTime, now: WallClock): Reply {
    this.askedDate = date;
    const then = (result: ToolResult): Reply => {
      if (result.ok) return this.ending(["Done.", `Your ${this.service()} is now on ${this.when(date, time, now)}.`], "appointment_rescheduled");
      const offer = offerFreeTimes({ date, time }, result, now.date);
      if (offer) return { sentences: offer, expects: "reminder_change" };
      return this.ending(["I'm sorry, I wasn't able to move it just now.", "Your appointment stays as it is."], "agent_ended");
    };
    return { tool: { name: "reschedule_appointment", arguments: { date: isoDate(date), time: isoTime(time) }, then }, sentences: [], expects: null };
  }

  private ending(sentences: readonly string[], reason: string): Reply {
    return { sentences: [...sentences, ...this.goodbye], expects: null, action: { type: "end_call", reason } };
  }

  private when(date: CalendarDate, time: ClockTime, now: WallClock): string {
    return `${spokenDate(date, now.date)} at ${spokenTime(time)}`;
  }

  private service(): string {
    return this.appointment.service ? `${this.appointment.service} appointment` : "appointment";
  }
}
