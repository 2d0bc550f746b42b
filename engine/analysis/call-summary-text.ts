import type { CallEndReason } from "../call-events.js";
import type { AnalysisInput, CallSentiment, FieldValue } from "./call-analysis.js";
import type { CallFacts } from "./call-facts.js";

/** How a call that achieved nothing ended, by the engine's end reason or the dialogue's. */
const QUIET_ENDINGS: Partial<Record<CallEndReason | "not_understood" | "caller_goodbye", string>> = {
  caller_hangup: "The call ended when the other side hung up.",
  caller_goodbye: "The call ended with a goodbye.",
  end_call_phrase: "The call ended with a goodbye.",
  not_understood: "The agent could not understand the other side and ended the call.",
  silence_timeout: "The call ended after a long silence.",
  max_duration: "The call reached its maximum duration.",
  credit_exhausted: "The call ended when the account's credit ran out.",
  stopped: "The call was ended through the API.",
  error: "The call ended on a technical error.",
  audio_overrun: "The call was cut off: its audio arrived faster than real time.",
  client_not_reading: "The call was cut off: the other side's connection stopped taking the agent's audio.",
};

/**
 * A few sentences on the call, from its facts alone (no model): who, how long, what came of
 * it, and the other side's tone. Made for people skimming a call list.
 */
export function summarizeCall(input: AnalysisInput, facts: CallFacts, sentiment: CallSentiment): string {
  const party = input.direction === "outbound" ? "the callee" : "the caller";
  const Party = party[0]!.toUpperCase() + party.slice(1);
  const sentences = [opening(input)];
  switch (facts.outcome) {
    case "appointment_booked": {
      const b = facts.booking ?? {};
      const what = typeof b.service === "string" ? `${/^[aeiou]/i.test(b.service) ? "an" : "a"} ${b.service} appointment` : "an appointment";
      const who = typeof b.customer_name === "string" ? ` for ${b.customer_name}` : "";
      sentences.push(`${Party} booked ${what}${when(b.appointment_date, b.appointment_time)}${who}.`);
      break;
    }
    case "appointment_confirmed":
    case "appointment_cancelled":
    case "appointment_rescheduled": {
      const b = facts.booking ?? {};
      const what = typeof b.service === "string" ? `${b.service} appointment` : "appointment";
      const did = { appointment_confirmed: "confirmed", appointment_cancelled: "cancelled", appointment_rescheduled: "moved" }[facts.outcome];
      sentences.push(`${Party} ${did} their ${what}${when(b.appointment_date, b.appointment_time, facts.outcome === "appointment_rescheduled" ? "to" : "on")}.`);
      break;
    }
    case "information_provided": {
      const questions = facts.answered.map((q) => `"${q}"`);
      sentences.push(`The agent answered ${questions.length === 1 ? "the question" : `${questions.length} questions:`} ${questions.join(", ")}.`);
      break;
    }
    case "transferred":
      sentences.push(`${Party} was transferred to a person.`);
      break;
    case "voicemail_left":
      sentences.push("An answering machine picked up and the agent left a message.");
      break;
    case "callback_requested": {
      sentences.push(`${Party} asked to be called back${when(facts.callback?.date, facts.callback?.time)}.`);
      break;
    }
    case "do_not_call":
      sentences.push(`${Party} asked not to be called again, and the number was put on the do-not-call list.`);
      break;
    case "not_interested":
      sentences.push(`${Party} said they were not interested.`);
      break;
    case "no_action": {
      const dialogueEnd = input.actions.findLast((a) => a.type === "end_call");
      const reason = (dialogueEnd?.type === "end_call" ? dialogueEnd.reason : null) ?? input.endReason;
      sentences.push("Nothing was booked, answered or handed over.");
      const ending = reason ? QUIET_ENDINGS[reason as keyof typeof QUIET_ENDINGS] : undefined;
      if (ending) sentences.push(ending);
      break;
    }
  }
  const spoke = input.transcript.some((s) => s.role === "user");
  sentences.push(spoke ? `${Party}'s tone was ${sentiment.overall}.` : `${Party} said nothing the agent could make out.`);
  return sentences.join(" ");
}

/** " on 2026-12-01 at 15:00", with what is known of the two, or "". */
function when(date: FieldValue | undefined, time: FieldValue | undefined, preposition = "on"): string {
  return [date ? ` ${preposition} ${date}` : "", time ? ` at ${time}` : ""].join("");
}

function opening(input: AnalysisInput): string {
  const length = duration(input.durationSeconds);
  const kind =
    input.direction === "outbound"
      ? `Outbound call${input.farEndNumber ? ` to ${input.farEndNumber}` : ""}`
      : input.direction === "inbound"
        ? `Inbound call${input.farEndNumber ? ` from ${input.farEndNumber}` : ""}`
        : "Web call";
  return `${kind} with ${input.agentName}, ${length}.`;
}

/** "45 s", "2 min 5 s", "3 min". */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const rest = s % 60;
  return `${Math.floor(s / 60)} min${rest ? ` ${rest} s` : ""}`;
}
