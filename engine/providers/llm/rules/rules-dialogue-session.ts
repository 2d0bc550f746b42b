import type { DialogueEvent, DialogueSession } from "../dialogue-provider.js";
import type { ExpectedSpeech } from "../../asr/expected-speech.js";
import type { Expectation, Reply } from "./rules-reply.js";
import { offerFreeTimes } from "./free-times.js";
import { ReminderConversation, type ReminderAppointment } from "./reminder-conversation.js";
import type { AgentProfile } from "./agent-profile.js";
import { isAnsweringMachineGreeting } from "./answering-machine.js";
import { bookingArguments, missingSlot, type BookingDraft } from "./booking-draft.js";
import { compareDates, compareTimes, isoDate, isoTime } from "./calendar.js";
import {
  asksForSlot,
  goodbyeKind,
  type Goodbye,
  isBookingRequest,
  isCallbackRequest,
  isCancelRequest,
  isDoNotCallRequest,
  isExistingAppointmentRequest,
  isGreeting,
  isHowAreYou,
  isIdentityQuestion,
  isNothingElse,
  isNotInterested,
  isPhoneNumberStatement,
  isQuestion,
  isRepeatRequest,
  isThanks,
  isTransferRequest,
  isWhoAreYou,
  slotToChange,
  yesOrNo,
  type YesNo,
} from "./caller-intents.js";
import { findDateTime } from "./date-time-extraction.js";
import { matchFaq, type FaqEntry } from "./faq-matcher.js";
import { matchIntent, slotAnswer } from "./intent-requests.js";
import { findName } from "./name-extraction.js";
import { LINES, type ReplyLines } from "./reply-lines.js";
import { findService, type Service } from "./service-extraction.js";
import { toUtterance, type Utterance } from "./utterance.js";
import type { WallClock } from "./wall-clock.js";
import { KNOWLEDGE_SEARCH_TOOL, knowledgePassages, type ToolExecutor, type ToolResult } from "../../../tools.js";
import { answerFromPassages } from "./knowledge-answer.js";
import type { DialogueIntent } from "../../../types.js";
import { fillTemplate } from "../../../text/template.js";
import { spokenDate, spokenTime } from "./spoken-date-time.js";
import { chooseMenuOption, readPhoneMenu, type MenuOption } from "./phone-menu.js";
import { endsOpen, type TurnCompleteness } from "../../../turn/turn-completeness.js";

/** What one utterance said about the booking. */
interface Slots {
  service: Service | null;
  date: BookingDraft["date"];
  time: BookingDraft["time"];
  name: string | null;
}

/** An intent under way: the arguments its questions have had answers for. */
interface IntentDraft {
  intent: DialogueIntent;
  values: Record<string, string>;
}

/** The first of the intent's arguments the caller has not answered yet (its question is the one to ask). */
function unansweredSlot(request: IntentDraft): DialogueIntent["slots"][number] | undefined {
  return request.intent.slots.find((slot) => !(slot.name in request.values));
}

/** What a recognizer makes of a cough or a hesitation. */
const NOISE = new Set(["um", "uh", "uhm", "er", "erm", "hmm", "mm", "ah", "oh", "huh"]);

/** Questions a key answers: 1 for yes, 2 for no. */
const YES_NO_QUESTIONS: ReadonlySet<Expectation> = new Set<Expectation>(["confirmation", "transfer_offer", "anything_else", "reminder"]);

/** What the recognizer listens for after each question (the others may be answered anyhow). */
const EXPECTED_ANSWERS: Partial<Record<Expectation, ExpectedSpeech["answer"]>> = {
  service: "service",
  date: "date",
  time: "time",
  name: "name",
  confirmation: "yes_no",
  transfer_offer: "yes_no",
};

/** Consecutive misunderstandings before the agent offers a transfer (or, without one, ends the call). */
const MAX_MISUNDERSTANDINGS = 3;

/**
 * One call with the `rules` agent: intents from keywords, slot filling for appointments, FAQ
 * answers from metadata, transfer and goodbye. Deterministic and synchronous; `respond`
 * streams each sentence as its own `text` event (pieces after the first start with a space,
 * so that the pieces joined are the reply).
 *
 * Three misunderstandings in a row: with transfer enabled the agent offers a transfer once
 * (one more miss then ends the call), without it the agent apologises and ends the call with
 * reason `not_understood`: a caller the recognizer cannot follow gains nothing from a loop.
 *
 * A caller asking not to be called again, whatever the state, gets a confirmation, the tool
 * call `do_not_call` and the end of the call (reason `do_not_call`).
 *
 * An answering machine's greeting (see `isAnsweringMachineGreeting`), whatever the state, gets
 * the voicemail message and ends the call with reason `voicemail`. The reply comes when the
 * caller's turn ends, `endpointing_ms` after the greeting's last word (a beep is not speech).
 * Another company's phone menu gets the key of the agent's option (tool `send_dtmf`) and no word.
 *
 * "Call me back tomorrow" ends the call with a callback noted (`callback_requested`), "I'm not
 * interested" with reason `not_interested`; an answered FAQ is noted (`answered_question`).
 * Keys the caller presses are read as words (`respondToKeys`). On a reminder call the
 * appointment's questions are the ReminderConversation's.
 */
export class RulesDialogueSession implements DialogueSession {
  private expectation: Expectation | null = null;
  private draft: BookingDraft | null = null;
  private request: IntentDraft | null = null;
  private callerName: string | null;
  private misunderstandings = 0;
  private transferOffered = false;
  private lastReply: Reply | null = null;

  /** On a reminder call: the conversation about its appointment. */
  private readonly reminder: ReminderConversation | null;

  constructor(
    private readonly profile: AgentProfile,
    private readonly lines: ReplyLines,
    private readonly now: () => Date,
    callerName: string | null,
    private readonly tools: ToolExecutor,
    reminder: ReminderAppointment | null = null,
  ) {
    this.callerName = callerName;
    this.reminder = reminder ? new ReminderConversation(reminder, this.lines.goodbye().slice(-2)) : null;
    // The reminder call opens with its question (the control plane's first message).
    if (this.reminder) this.expectation = "reminder";
  }

  async *respond(userText: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
    if (signal.aborted) return;
    let reply = this.decide(toUtterance(userText));
    if (reply.tool) {
      const result = await this.tools.execute(reply.tool.name, reply.tool.arguments, signal);
      if (signal.aborted) return;
      reply = reply.tool.then(result);
    }
    this.lastReply = reply;
    for (const [index, sentence] of reply.sentences.entries()) {
      if (signal.aborted) return;
      if (index === reply.sentences.length - 1) this.expectation = reply.expects;
      yield { type: "text", text: index === 0 ? sentence : ` ${sentence}` };
    }
    if (reply.note && !signal.aborted) yield reply.note;
    if (reply.action && !signal.aborted) yield reply.action;
  }

  /**
   * Keys read as the words they stand for here: "0" asks for a person, "1" and "2" answer a
   * yes/no question (yes, no), and other keys are the number they spell ("3" at "what time?").
   */
  respondToKeys(digits: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
    let words = digits;
    if (digits === "0") words = "operator";
    else if (this.expectation !== null && YES_NO_QUESTIONS.has(this.expectation) && (digits === "1" || digits === "2")) words = digits === "1" ? "yes" : "no";
    return this.respond(words, signal);
  }

  /**
   * What the agent's question asked for. Not the opening "how can I help?" (a caller may say
   * anything: a grammar of requests heard "i would like to come in on tuesday" as a service
   * named), nor a reminder's "will you make it?" (often answered "I need to cancel").
   */
  expectedSpeech(): ExpectedSpeech | null {
    const answer = this.expectation && EXPECTED_ANSWERS[this.expectation];
    if (!answer) return null;
    return { answer, services: this.profile.services.map((service) => service.name), names: this.callerName ? [this.callerName] : [] };
  }

  /**
   * A supervisor's line: ignored. The rules follow their own questions and cannot tell what
   * free text asked; what they expect next stays as it was (the caller may still answer it).
   */
  agentSaid(_text: string): void {}

  /** A supervisor's guidance: ignored, the rules cannot follow free text (a chat model does). */
  guide(_text: string): void {}

  /** A question the caller did not hear in full was not asked: a later "yes" must not answer it. */
  truncateLastReply(heardText: string): void {
    if (!this.lastReply || this.expectation === null) return;
    const said = toUtterance(this.lastReply.sentences.join(" ")).words;
    const heard = toUtterance(heardText).words;
    const heardAll = said.every((word, i) => heard[i] === word);
    if (!heardAll) this.expectation = null;
  }

  /**
   * Words ending open ("on", "and", "um") and an answering machine's greeting are incomplete; words this conversation understands
   * now (an answer to the agent's question, a question it can answer, a request it knows) are
   * complete; anything else is unknown. Decided by planning the reply on a copy of the state,
   * which is then put back.
   */
  judgeTurn(text: string): TurnCompleteness {
    if (endsOpen(text)) return "incomplete";
    const utterance = toUtterance(text);
    // The voicemail message goes after the beep, which is no speech: wait the longest.
    if (isAnsweringMachineGreeting(utterance)) return "incomplete";
    const restore = this.checkpoint();
    try {
      return this.decide(utterance).missed ? "unknown" : "complete";
    } finally {
      restore();
    }
  }

  /** Puts the conversation back as it is now (planning a reply, or an early reply withdrawn, changes it). */
  checkpoint(): () => void {
    const { expectation, callerName, misunderstandings, transferOffered, lastReply } = this;
    const draft = this.draft && { ...this.draft };
    const request = this.request && { intent: this.request.intent, values: { ...this.request.values } };
    const restoreReminder = this.reminder?.saveState();
    return () => {
      Object.assign(this, { expectation, callerName, misunderstandings, transferOffered, lastReply, draft, request });
      restoreReminder?.();
    };
  }

  private decide(utterance: Utterance): Reply {
    const expecting = this.expectation;
    this.expectation = null;
    const now = this.profile.clock.read(this.now());
    const reply = this.route(utterance, expecting, now);
    if (!reply.missed) {
      this.misunderstandings = 0;
      this.transferOffered = false;
    }
    return reply;
  }

  private route(utterance: Utterance, expecting: Expectation | null, now: WallClock): Reply {
    if (utterance.words.every((w) => NOISE.has(w))) {
      // Nothing said before the agent's first turn: open the call.
      if (!this.lastReply) return { sentences: this.lines.greeting(this.callerName), expects: null };
      // A cough or a breath is not a misunderstanding: ask again without counting it.
      return { ...this.repeatQuestion(expecting, LINES.didNotCatch, now), missed: true };
    }
    // Before anything else: a greeting may well offer "press zero for the operator".
    if (isAnsweringMachineGreeting(utterance)) return this.leaveVoicemail();
    const menu = readPhoneMenu(utterance);
    if (menu) return this.pickFromMenu(menu);
    // Whatever was being asked: a callee who wants no more calls is not kept on the line.
    if (isDoNotCallRequest(utterance)) return this.optOut();
    if (isTransferRequest(utterance)) return this.transfer(now);
    // "I'm busy, call me back tomorrow": a day in it is the callback's, not a booking's.
    if (isCallbackRequest(utterance)) return this.callBack(utterance, now);
    if (isRepeatRequest(utterance) && this.lastReply) return { sentences: this.lastReply.sentences, expects: this.lastReply.expects };
    const goodbye = goodbyeKind(utterance, this.profile.endCallPhrases);
    const answer = yesOrNo(utterance);

    const expected = this.answerExpected(utterance, expecting, goodbye, answer, now);
    if (expected) return expected;
    if (goodbye) return this.goodbye();
    if (this.draft && isCancelRequest(utterance)) return this.dropBooking();
    // The number is kept in the transcript (an agent's `phone` field reads it); its digits are no booking slot.
    if (isPhoneNumberStatement(utterance)) return this.withFollowUp(LINES.notedNumber, now);
    if (isNotInterested(utterance)) return { sentences: LINES.notInterested, expects: null, action: { type: "end_call", reason: "not_interested" } };
    // A request the agent answers with one of its tools ("where is my order?") or a hand-off,
    // unless a booking is under way: the integrator's intents go before the built-in answers
    // below ("i need to cancel my appointment" may be theirs to answer).
    const intent = this.draft ? null : matchIntent(this.profile.intents, utterance);
    if (intent) return this.startRequest(intent, utterance);
    if (!this.draft && isExistingAppointmentRequest(utterance)) {
      return this.profile.transferEnabled
        ? { sentences: [...LINES.onlyNewAppointments, LINES.offerTransfer], expects: "transfer_offer" }
        : { sentences: [...LINES.onlyNewAppointments, ...LINES.anythingElse], expects: "anything_else" };
    }

    const question = isQuestion(utterance);
    const faq = matchFaq(this.profile.faq, utterance);
    if (faq && question) return this.answerFaq(faq, now);

    const slots = this.findSlots(utterance, expecting, now);
    const mentionsSlot = slots.service !== null || slots.date !== null || slots.time !== null;
    const wantsBooking = this.draft !== null || isBookingRequest(utterance) || (mentionsSlot && (!question || asksForSlot(utterance)));
    if (wantsBooking) {
      const started = this.draft === null;
      this.draft ??= { service: null, date: null, time: null, name: this.callerName };
      const booking = this.fillSlots(slots, now, started);
      if (booking) return booking;
    }
    if (faq) return this.answerFaq(faq, now);
    if (slots.name && !this.draft) {
      this.callerName = slots.name;
      return { sentences: this.lines.greeting(slots.name), expects: null };
    }
    const small = this.smallTalk(utterance, answer, now);
    if (small) return small;
    if (question && !this.draft && this.tools.definitions.some((tool) => tool.name === KNOWLEDGE_SEARCH_TOOL)) return this.lookUp(utterance);
    return this.notUnderstood(expecting, now, question);
  }

  /**
   * A question no FAQ entry answers, looked up in the agent's documents: the agent says the
   * best passage's sentence (noted as an answered question, with the passage), or that it has
   * no answer, which is not counted as a misunderstanding: the caller was heard.
   */
  private lookUp(utterance: Utterance): Reply {
    const then = (result: ToolResult): Reply => {
      const answer = answerFromPassages(utterance, knowledgePassages(result));
      if (!answer) return { sentences: [...LINES.noAnswer, ...LINES.anythingElse], expects: "anything_else" };
      const note = { type: "answered_question", question: utterance.text, passage_id: answer.passage.passage_id } as const;
      return { sentences: [answer.text, ...LINES.anythingElse], expects: "anything_else", note };
    };
    return { tool: { name: KNOWLEDGE_SEARCH_TOOL, arguments: { question: utterance.text }, then }, sentences: [], expects: null };
  }

  /** Short answers that only make sense as answers to the last question. */
  private answerExpected(
    utterance: Utterance,
    expecting: Expectation | null,
    goodbye: Goodbye | null,
    answer: YesNo | null,
    now: WallClock,
  ): Reply | null {
    switch (expecting) {
      case "reminder":
      case "reminder_change":
        return this.reminder?.answer(utterance, expecting, answer, now) ?? null;
      case "confirmation": {
        if (!this.draft) return null;
        if (isCancelRequest(utterance)) return this.dropBooking();
        const correction = this.fillSlots(this.findSlots(utterance, null, now), now, false);
        if (correction) return correction;
        if (answer === "yes") return this.book(now, goodbye === "strong");
        if (answer === "no") return { sentences: LINES.whatToChange, expects: "change" };
        return null;
      }
      case "change": {
        if (!this.draft) return null;
        if (isCancelRequest(utterance)) return this.dropBooking();
        const correction = this.fillSlots(this.findSlots(utterance, null, now), now, false);
        if (correction) return correction;
        const slot = slotToChange(utterance);
        if (slot) {
          this.draft[slot] = null;
          return { sentences: [this.lines.slotQuestion(slot, this.draft)], expects: slot };
        }
        // "no, it's fine": back to the confirmation.
        return answer ? this.nextBookingStep(now, []) : null;
      }
      case "transfer_offer":
        if (answer === "yes") return this.transfer(now);
        if (answer !== "no" && goodbye !== "done") return null;
        if (this.draft) return this.nextBookingStep(now, LINES.noProblem);
        return { sentences: [...LINES.noProblem, ...this.lines.helpPrompt()], expects: null };
      case "intent_slot": {
        if (!this.request) return null;
        const value = slotAnswer(utterance);
        return value === null ? null : this.nextRequestStep(value);
      }
      case "anything_else":
        if (goodbye || isNothingElse(utterance) || (answer === "no" && utterance.words.length <= 3)) return this.goodbye();
        if (answer === "yes" && utterance.words.length <= 2) return { sentences: LINES.whatElse, expects: null };
        return null;
      default:
        return null;
    }
  }

  private findSlots(utterance: Utterance, expecting: Expectation | null, now: WallClock): Slots {
    // A short "three" is a time when the agent asked for one, or when the booking still lacks one.
    const timeExpected = expecting === "time" || (this.draft?.time === null && utterance.words.length <= 3);
    const { date, time } = findDateTime(utterance.text, now, { timeExpected });
    // An answer with a day or time in it is not the service's name, whatever was asked.
    const bareService = expecting === "service" && date === null && time === null;
    return {
      service: findService(utterance, this.profile.services, bareService),
      date,
      time,
      name: findName(utterance, { bare: expecting === "name", notNames: this.profile.serviceWords }),
    };
  }

  /**
   * Puts what the caller said into the draft (new values replace old ones: that is how
   * corrections work) and asks for what is missing, or confirms. Null when the words changed
   * nothing and the booking did not just start.
   */
  private fillSlots(slots: Slots, now: WallClock, started: boolean): Reply | null {
    const draft = this.draft;
    if (!draft) return null;
    const thanks: string[] = [];
    const problems: string[] = [];
    let changed = false;
    if (slots.name && slots.name !== draft.name) {
      draft.name = slots.name;
      this.callerName = slots.name;
      thanks.push(...this.lines.thanksName(slots.name));
      changed = true;
    }
    if (slots.service && slots.service.name !== draft.service?.name) {
      draft.service = slots.service;
      changed = true;
    }
    if (slots.date && (!draft.date || compareDates(slots.date, draft.date) !== 0)) {
      if (compareDates(slots.date, now.date) < 0) problems.push(...LINES.pastDay);
      else {
        draft.date = slots.date;
        changed = true;
      }
    }
    if (slots.time && (!draft.time || compareTimes(slots.time, draft.time) !== 0)) {
      draft.time = slots.time;
      changed = true;
    }
    if (draft.date && draft.time && compareDates(draft.date, now.date) === 0 && compareTimes(draft.time, now.time) <= 0) {
      draft.time = null;
      problems.push(...LINES.pastTime);
    }
    if (!changed && problems.length === 0 && !started) return null;
    const opening = started ? LINES.startBooking : thanks.length === 0 && problems.length === 0 ? LINES.gotIt : [];
    return this.nextBookingStep(now, [...opening, ...thanks, ...problems]);
  }

  /** The question for the first missing slot, or the confirmation when nothing is missing. */
  private nextBookingStep(now: WallClock, prefix: readonly string[]): Reply {
    const draft = this.draft!;
    const slot = missingSlot(draft);
    if (slot) return { sentences: [...prefix, this.lines.slotQuestion(slot, draft)], expects: slot };
    return { sentences: [...prefix, this.lines.summary(draft, now.date), LINES.confirmQuestion], expects: "confirmation" };
  }

  /** Books the draft; what the agent says depends on what the booking really came to. */
  private book(now: WallClock, thenGoodbye: boolean): Reply {
    const draft = this.draft!;
    this.draft = null;
    const then = (result: ToolResult): Reply => {
      if (!result.ok) return this.notBooked(draft, result, now);
      const booked = this.lines.booked(draft, now.date);
      if (!thenGoodbye) return { sentences: [...booked, ...LINES.anythingElse], expects: "anything_else" };
      return { ...this.goodbye(), sentences: [...booked, ...this.lines.goodbye()] };
    };
    return { tool: { name: "book_appointment", arguments: bookingArguments(draft), then }, sentences: [], expects: null };
  }

  /**
   * The booking was refused: with free times offered (the slot is taken, or outside the
   * agent's hours), the agent names them and asks again for a day and time; otherwise it says
   * it could not book and drops the booking.
   */
  private notBooked(draft: BookingDraft, result: Extract<ToolResult, { ok: false }>, now: WallClock): Reply {
    const offer = offerFreeTimes({ date: draft.date!, time: draft.time! }, result, now.date);
    if (!offer) return { sentences: [...LINES.couldNotBook, ...LINES.anythingElse], expects: "anything_else" };
    this.draft = { ...draft, date: null, time: null };
    return { sentences: offer, expects: "date" };
  }

  /** Starts an intent: a number in the request itself ("where is order one two three") answers its first question. */
  private startRequest(intent: DialogueIntent, utterance: Utterance): Reply {
    this.request = { intent, values: {} };
    const [first] = intent.slots;
    const said = first && slotAnswer(utterance);
    return this.nextRequestStep(said && /^\d+$/.test(said) ? said : null);
  }

  /**
   * Takes `answer` for the intent's first unanswered argument, then asks for the next one, or
   * calls the tool once every one has its answer: the agent says the intent's reply filled
   * from the tool's answer and the caller's arguments, or its failure line when the tool failed.
   */
  private nextRequestStep(answer: string | null): Reply {
    const request = this.request!;
    const asked = unansweredSlot(request);
    if (answer !== null && asked) request.values[asked.name] = answer;
    const next = unansweredSlot(request);
    if (next) return { sentences: [next.question], expects: "intent_slot" };
    this.request = null;
    const { intent, values } = request;
    const then = (result: ToolResult): Reply => {
      const said = result.ok ? fillTemplate(intent.reply, { ...values, ...result.data }) : intent.failure;
      // Passed to another agent: it takes the next turn, so nothing is asked here.
      if (result.ok && typeof result.then === "object" && "handoff" in result.then) return { sentences: [said], expects: null, action: { type: "handoff", handoff: result.then.handoff } };
      return { sentences: [said, ...LINES.anythingElse], expects: "anything_else" };
    };
    return { tool: { name: intent.tool, arguments: { ...intent.arguments, ...values }, then }, sentences: [], expects: null };
  }

  private dropBooking(): Reply {
    this.draft = null;
    return { sentences: [...LINES.bookingDropped, ...LINES.anythingElse], expects: "anything_else" };
  }

  private answerFaq(faq: FaqEntry, now: WallClock): Reply {
    const sentences = this.lines.faqAnswer(faq.answer);
    const note = { type: "answered_question", question: faq.question } as const;
    if (this.draft) return { ...this.nextBookingStep(now, sentences), note };
    return { sentences: [...sentences, ...LINES.anythingElse], expects: "anything_else", note };
  }

  /** The caller wants to be called back (at the day and time they said, if any): the agent agrees and hangs up. */
  private callBack(utterance: Utterance, now: WallClock): Reply {
    // "I'm busy right now": the present is why they cannot talk, not when to call.
    const { date, time } = findDateTime(utterance.text.replace(/\b(right now|now|at the moment)\b/g, " "), now, { timeExpected: false });
    const when = [date ? spokenDate(date, now.date) : null, time ? `at ${spokenTime(time)}` : null].filter(Boolean).join(" ");
    return {
      sentences: [when ? `Of course, we'll call you back ${date ? "on " : ""}${when}.` : "Of course, we'll call you back later.", ...this.lines.goodbye().slice(-2)],
      expects: null,
      note: { type: "callback_requested", date: date ? isoDate(date) : null, time: time ? isoTime(time) : null },
      action: { type: "end_call", reason: "callback_requested" },
    };
  }

  private transfer(now: WallClock): Reply {
    if (this.profile.transferEnabled) return { sentences: this.lines.transferring(), expects: null, action: { type: "transfer" } };
    return this.withFollowUp(this.lines.cannotTransfer(), now);
  }

  private goodbye(): Reply {
    return { sentences: this.lines.goodbye(), expects: null, action: { type: "end_call", reason: "caller_goodbye" } };
  }

  /** The control plane lists the number (tool `do_not_call`) before the agent says it has. */
  private optOut(): Reply {
    const end = { type: "end_call", reason: "do_not_call" } as const;
    const then = (result: ToolResult): Reply => ({ sentences: result.ok ? LINES.doNotCall : LINES.doNotCallFailed, expects: null, action: end });
    return { tool: { name: "do_not_call", arguments: {}, then }, sentences: [], expects: null };
  }

  /**
   * Another company's phone menu: the agent presses the key of the option it wants (tool
   * `send_dtmf`, offered on calls that can send keys) and listens on, saying nothing; with no
   * option to its liking, or no way to press keys, it waits for what comes next.
   */
  private pickFromMenu(menu: readonly MenuOption[]): Reply {
    const choice = chooseMenuOption(menu, this.profile.menuGoal);
    const quiet: Reply = { sentences: [], expects: null };
    if (!choice || !this.tools.definitions.some((tool) => tool.name === "send_dtmf")) return quiet;
    return { tool: { name: "send_dtmf", arguments: { digits: choice.key }, then: () => quiet }, sentences: [], expects: null };
  }

  private leaveVoicemail(): Reply {
    return { sentences: this.lines.voicemail(this.callerName), expects: null, action: { type: "end_call", reason: "voicemail" } };
  }

  private smallTalk(utterance: Utterance, answer: YesNo | null, now: WallClock): Reply | null {
    if (isIdentityQuestion(utterance)) return this.withFollowUp(this.lines.automated(), now);
    if (isWhoAreYou(utterance)) return this.withFollowUp(this.lines.introduction(), now);
    if (isHowAreYou(utterance)) return this.withFollowUp(LINES.howAreYou, now);
    if (isThanks(utterance)) {
      if (this.draft) return this.withFollowUp(LINES.youAreWelcome, now);
      return { sentences: [...LINES.youAreWelcome, ...LINES.anythingElse], expects: "anything_else" };
    }
    if (isGreeting(utterance)) return this.draft ? this.withFollowUp(LINES.imHere, now) : { sentences: this.lines.greeting(this.callerName), expects: null };
    if (answer === "yes" && !this.draft) return { sentences: LINES.whatElse, expects: null };
    return null;
  }

  /** `lines`, then the pending booking question or "How can I help you today?". */
  private withFollowUp(lines: readonly string[], now: WallClock): Reply {
    if (this.draft) return this.nextBookingStep(now, lines);
    return { sentences: [...lines, ...LINES.howCanIHelp], expects: null };
  }

  private notUnderstood(expecting: Expectation | null, now: WallClock, question = false): Reply {
    this.misunderstandings += 1;
    if (this.misunderstandings >= MAX_MISUNDERSTANDINGS) {
      if (this.profile.transferEnabled && !this.transferOffered) {
        this.transferOffered = true;
        return { sentences: [...LINES.troubleUnderstanding, LINES.offerTransfer], expects: "transfer_offer", missed: true };
      }
      return { sentences: LINES.giveUp, expects: null, action: { type: "end_call", reason: "not_understood" }, missed: true };
    }
    const sorry = question && !this.draft ? LINES.noAnswer : this.misunderstandings === 1 ? LINES.didNotCatch : LINES.stillDidNotGet;
    return { ...this.repeatQuestion(expecting, sorry, now), missed: true };
  }

  /** `prefix`, then the question the caller did not answer (or what the agent can do). */
  private repeatQuestion(expecting: Expectation | null, prefix: readonly string[], now: WallClock): Reply {
    if (expecting === "transfer_offer") return { sentences: [...prefix, LINES.offerTransfer], expects: expecting };
    if (expecting === "change") return { sentences: [...prefix, ...LINES.whatToChange.slice(1)], expects: expecting };
    if (expecting === "intent_slot" && this.request) {
      const next = unansweredSlot(this.request);
      if (next) return { sentences: [...prefix, next.question], expects: expecting };
    }
    if ((expecting === "reminder" || expecting === "reminder_change") && this.reminder) return { sentences: [...prefix, this.reminder.question(expecting)], expects: expecting };
    if (this.draft) return this.nextBookingStep(now, prefix);
    return { sentences: [...prefix, ...this.lines.helpPrompt()], expects: null };
  }
}
