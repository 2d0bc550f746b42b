import type { DialogueProvider } from "../dialogue-provider.js";
import { readAgentProfile } from "./agent-profile.js";
import { ReplyLines } from "./reply-lines.js";
import { RulesDialogueSession } from "./rules-dialogue-session.js";
import { readReminder } from "./reminder-conversation.js";

export interface RulesDialogueOptions {
  /** The clock for "today", "tomorrow" and "never in the past"; tests fix it. Default: the system clock. */
  now?: () => Date;
}

/**
 * The embedded dialogue engine: no model, no network, microseconds per turn. It greets, answers
 * FAQ entries from `metadata.faq`, books appointments (the control plane's `book_appointment`
 * tool, whose answer it reports: booked, or the free times offered instead), transfers,
 * leaves a message on answering machines (`metadata.voicemail_message`) and ends calls. The
 * call's `context.customer_name`, when given, is the caller's name. On a reminder call
 * (`context.purpose` `appointment_reminder`) it confirms, cancels or moves the appointment.
 */
export function createRulesDialogueProvider(options: RulesDialogueOptions = {}): DialogueProvider {
  const now = options.now ?? (() => new Date());
  return {
    name: "rules",
    open({ agent, context, tools }) {
      const profile = readAgentProfile(agent, context);
      const name = typeof context.customer_name === "string" && context.customer_name.trim() !== "" ? context.customer_name.trim() : null;
      return new RulesDialogueSession(profile, new ReplyLines(profile), now, name, tools, readReminder(context));
    },
  };
}
