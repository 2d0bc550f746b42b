import type { AgentProfile } from "./agent-profile.js";
import type { BookingDraft, BookingSlot } from "./booking-draft.js";
import type { CalendarDate } from "./calendar.js";
import { WEEKDAY_NAMES, weekdayOf } from "./calendar.js";
import { spokenDate, spokenTime } from "./spoken-date-time.js";

/**
 * What the rules agent says: short sentences that read well aloud (no markdown, "3:00 PM"
 * rather than "15:00"), one sentence per array item so that each streams on its own. Fixed
 * lines are here; lines that name the agent, the business or the booking are `ReplyLines`.
 */
export const LINES = {
  didNotCatch: ["Sorry, I didn't catch that."],
  stillDidNotGet: ["Sorry, I still didn't get that."],
  howAreYou: ["I'm doing well, thanks for asking."],
  howCanIHelp: ["How can I help you today?"],
  whatElse: ["Sure, what can I help you with?"],
  anythingElse: ["Is there anything else I can help you with?"],
  youAreWelcome: ["You're welcome."],
  imHere: ["Yes, I'm here."],
  noAnswer: ["I'm sorry, I don't have an answer to that."],
  startBooking: ["Sure, I can help you book an appointment."],
  gotIt: ["Got it."],
  whatToChange: ["No problem.", "What would you like to change: the service, the day, the time or the name?"],
  bookingDropped: ["Okay, I won't book anything."],
  pastDay: ["Sorry, that day has already passed."],
  pastTime: ["Sorry, that time has already passed today."],
  onlyNewAppointments: ["I'm sorry, I can only book new appointments."],
  noProblem: ["No problem."],
  troubleUnderstanding: ["I'm sorry, I'm having trouble understanding."],
  giveUp: ["I'm sorry, I'm having trouble understanding you on this line.", "Please try calling again later.", "Goodbye."],
  confirmQuestion: "Shall I book it?",
  offerTransfer: "Would you like me to put you through to someone?",
  couldNotBook: ["I'm sorry, I wasn't able to book that appointment just now."],
  doNotCallFailed: ["I understand, and I'm sorry for the trouble.", "I wasn't able to update our calling list just now, so please contact us and we'll take your number off.", "Goodbye."],
  doNotCall: ["I understand, and I'm sorry for the trouble.", "I've taken your number off our calling list, so we won't call you again.", "Goodbye."],
  notInterested: ["I understand. Thank you for your time.", "Goodbye."],
  willYouMakeIt: "Will you be able to make it?",
  notedNumber: ["Thank you, I've noted your number."],
  cancelOrMove: ["No problem.", "Would you like to cancel it, or move it to another day and time?"],
} as const;

/** The lines that depend on the agent's settings or on the booking. */
export class ReplyLines {
  constructor(private readonly profile: AgentProfile) {}

  greeting(callerName: string | null): string[] {
    const hi = callerName ? `Hi ${firstName(callerName)}` : "Hi";
    const business = this.profile.businessName;
    return [business ? `${hi}, thanks for calling ${business}.` : `${hi}, this is ${this.profile.agentName}.`, "How can I help you today?"];
  }

  /** Who is speaking: the agent's name and business. */
  introduction(): string[] {
    const business = this.profile.businessName;
    return [business ? `This is ${this.profile.agentName} at ${business}.` : `This is ${this.profile.agentName}.`];
  }

  /** "are you a robot?" */
  automated(): string[] {
    const business = this.profile.businessName;
    const lines = [`I'm ${this.profile.agentName}, an automated assistant${business ? ` for ${business}` : ""}.`];
    if (this.profile.transferEnabled) lines.push("I can put you through to a person if you like.");
    return lines;
  }

  /** What the agent can do, for callers who are lost. */
  capabilities(): string {
    const can = ["book an appointment"];
    if (this.profile.faq.entries.length > 0) can.push(`answer questions about ${this.profile.businessName ?? "our services"}`);
    if (this.profile.transferEnabled) can.push("put you through to someone");
    const list = can.length === 1 ? can[0] : `${can.slice(0, -1).join(", ")} or ${can[can.length - 1]}`;
    return `I can ${list}.`;
  }

  helpPrompt(): string[] {
    return [this.capabilities(), "What would you like to do?"];
  }

  thanksName(name: string): string[] {
    return [`Thanks, ${firstName(name)}.`];
  }

  slotQuestion(slot: BookingSlot, draft: BookingDraft): string {
    switch (slot) {
      case "service": {
        const names = this.profile.services.map((s) => s.name);
        if (names.length === 0) return "What is the appointment for?";
        if (names.length === 1) return `Would you like to book ${withArticle(names[0]!)}?`;
        return `Which service would you like: ${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}?`;
      }
      case "date":
        return "What day would you like to come in?";
      case "time":
        return draft.date ? `What time would you like on ${WEEKDAY_NAMES[weekdayOf(draft.date)]}?` : "What time would you like?";
      case "name":
        return "Can I have your name, please?";
    }
  }

  /** "So that's a cleaning for John Smith on Tuesday, March 4 at 3:00 PM." */
  summary(draft: BookingDraft, today: CalendarDate): string {
    return `So that's ${withArticle(draft.service!.name)} for ${draft.name} on ${spokenDate(draft.date!, today)} at ${spokenTime(draft.time!)}.`;
  }

  booked(draft: BookingDraft, today: CalendarDate): string[] {
    const when = `${spokenDate(draft.date!, today)} at ${spokenTime(draft.time!)}`;
    return ["You're all set.", `Your ${inSentence(draft.service!.name)} is booked for ${when}.`];
  }

  transferring(): string[] {
    return splitSentences(this.profile.transferMessage, "Please hold while I transfer you.");
  }

  cannotTransfer(): string[] {
    return ["I'm sorry, I can't transfer you to a person right now.", this.capabilities()];
  }

  goodbye(): string[] {
    const business = this.profile.businessName;
    return [business ? `Thanks for calling ${business}.` : "Thanks for calling.", "Have a great day.", "Goodbye."];
  }

  /**
   * The message left on an answering machine: the agent's `voicemail_message`, else who called
   * and a request to call back.
   */
  voicemail(calleeName: string | null): string[] {
    const hi = calleeName ? `Hi ${firstName(calleeName)}` : "Hi";
    const fallback = [`${hi}, this is ${this.profile.businessName ?? this.profile.agentName} calling.`, "Please call us back at your convenience.", "Goodbye."];
    return this.profile.voicemailMessage ? splitSentences(this.profile.voicemailMessage, fallback[0]!) : fallback;
  }

  faqAnswer(answer: string): string[] {
    return splitSentences(answer, answer);
  }
}

/** Sentences of free text from the agent's settings, so that they stream one by one. */
function splitSentences(text: string, fallback: string): string[] {
  const sentences = text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return sentences.length > 0 ? sentences : [fallback];
}

function firstName(name: string): string {
  return name.split(" ")[0]!;
}

/** A service name inside a sentence: "Cleaning" -> "cleaning", but "MRI scan" stays. */
function inSentence(name: string): string {
  return /^\p{Lu}\p{Ll}/u.test(name) ? name[0]!.toLowerCase() + name.slice(1) : name;
}

/** "a cleaning", "an eye exam". */
function withArticle(name: string): string {
  const phrase = inSentence(name);
  return `${/^[aeiou]/i.test(phrase) ? "an" : "a"} ${phrase}`;
}
