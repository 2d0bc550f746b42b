import { describe, expect, it } from "vitest";
import type { DialogueEvent, DialogueSession } from "../../../../../engine/providers/llm/dialogue-provider.js";
import { createRulesDialogueProvider } from "../../../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import type { ToolResult } from "../../../../../engine/tools.js";
import type { AgentSettings } from "../../../../../engine/types.js";
import { recordingTools, say, spoken, testAgent } from "../../../../helpers/dialogue.js";

/** Saturday, March 1, 2025, 10:00 UTC. */
const NOW = new Date("2025-03-01T10:00:00Z");

const FAQ = [
  { question: "What are your opening hours?", answer: "We are open Monday to Friday, 9 AM to 5 PM. On Saturdays we close at noon." },
  { question: "Do you accept insurance?", answer: "Yes, we accept most major insurance plans." },
  { question: "Is there parking near the office?", answer: "Yes, there is free parking behind the building." },
];

function agent(overrides: Partial<AgentSettings> = {}, metadata: Record<string, unknown> = {}): AgentSettings {
  return testAgent({ systemPrompt: "You book dental appointments.", metadata: { business_name: "Bright Smile Dental", faq: FAQ, ...metadata }, ...overrides });
}

/** The tools of the session `open` made last. */
let tools = recordingTools();

function open(settings: AgentSettings = agent(), options: { now?: Date; context?: Record<string, unknown>; tools?: ReturnType<typeof recordingTools> } = {}): DialogueSession {
  const now = options.now ?? NOW;
  tools = options.tools ?? recordingTools();
  return createRulesDialogueProvider({ now: () => now }).open({ agent: settings, context: options.context ?? {}, tools });
}

/** The tools called since the last look (the turn just said: `_events` names it for the reader). */
function toolCalls(_events?: readonly DialogueEvent[]) {
  return tools.take().map((call) => ({ type: "tool_call", ...call }));
}

async function collect(events: AsyncIterable<DialogueEvent>): Promise<DialogueEvent[]> {
  const out: DialogueEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** Says each line in turn; returns the events of the last one. */
async function conversation(session: DialogueSession, lines: readonly string[]): Promise<DialogueEvent[]> {
  let events: DialogueEvent[] = [];
  for (const line of lines) events = await say(session, line);
  return events;
}

describe("rules dialogue provider", () => {
  it("is named rules", () => {
    expect(createRulesDialogueProvider().name).toBe("rules");
  });

  it("books an appointment over several recognizer-style utterances", async () => {
    const session = open();
    const seen: DialogueEvent[][] = [];
    for (const line of ["hi", "i would like to book an appointment", "my name is john smith", "for a cleaning", "tuesday at three in the afternoon"]) {
      seen.push(await say(session, line));
    }
    expect(spoken(seen[0]!)).toBe("Hi, thanks for calling Bright Smile Dental. How can I help you today?");
    expect(spoken(seen[1]!)).toContain("What is the appointment for?");
    expect(spoken(seen[2]!)).toContain("Thanks, John.");
    expect(toolCalls()).toEqual([]);
    expect(spoken(seen[4]!)).toContain("So that's a cleaning for John Smith on Tuesday, March 4 at 3:00 PM. Shall I book it?");

    const booked = await say(session, "yes");
    expect(toolCalls(booked)[0]).toEqual({
      type: "tool_call",
      name: "book_appointment",
      arguments: { customer_name: "John Smith", date: "2025-03-04", time: "15:00", service: "cleaning" },
    });
    expect(spoken(booked)).toContain("booked for Tuesday, March 4 at 3:00 PM");
  });

  it("streams one sentence per text event, and the pieces joined are the reply", async () => {
    const events = await say(open(), "hello");
    expect(events).toEqual([
      { type: "text", text: "Hi, thanks for calling Bright Smile Dental." },
      { type: "text", text: " How can I help you today?" },
    ]);
  });

  it("takes several slots from one utterance", async () => {
    const session = open();
    const confirm = await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    expect(spoken(confirm)).toContain("So that's a cleaning for Jane Doe on Sunday, March 2 at 3:00 PM. Shall I book it?");
    const booked = await say(session, "yeah");
    expect(toolCalls(booked)).toEqual([
      { type: "tool_call", name: "book_appointment", arguments: { customer_name: "Jane Doe", date: "2025-03-02", time: "15:00", service: "cleaning" } },
    ]);
  });

  it("asks for what is missing one question at a time", async () => {
    const session = open();
    expect(spoken(await say(session, "can i book an appointment for friday"))).toMatch(/What is the appointment for\?$/);
    expect(spoken(await say(session, "a checkup"))).toMatch(/What time would you like on Friday\?$/);
    expect(spoken(await say(session, "ten thirty"))).toMatch(/Can I have your name, please\?$/);
    expect(spoken(await say(session, "sam jones"))).toContain("So that's a checkup for Sam Jones on Friday, March 7 at 10:30 AM.");
    expect(toolCalls(await say(session, "yes please"))[0]).toMatchObject({ arguments: { date: "2025-03-07", time: "10:30", service: "checkup", customer_name: "Sam Jones" } });
  });

  it("applies a correction given at the confirmation", async () => {
    const session = open();
    await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    const reconfirm = await say(session, "no make it four pm");
    expect(toolCalls(reconfirm)).toEqual([]);
    expect(spoken(reconfirm)).toContain("on Sunday, March 2 at 4:00 PM. Shall I book it?");
    expect(toolCalls(await say(session, "yes"))[0]).toMatchObject({ arguments: { time: "16:00", date: "2025-03-02" } });
  });

  it("asks what to change on a plain no", async () => {
    const session = open();
    await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    expect(spoken(await say(session, "no"))).toContain("What would you like to change");
    expect(spoken(await say(session, "the day"))).toBe("What day would you like to come in?");
    expect(spoken(await say(session, "wednesday"))).toContain("on Wednesday, March 5 at 3:00 PM. Shall I book it?");
    expect(toolCalls(await say(session, "correct"))[0]).toMatchObject({ arguments: { date: "2025-03-05", time: "15:00" } });
  });

  it("books the agent's listed services, with their duration, despite small recognizer errors", async () => {
    const session = open(agent({}, { services: [{ name: "Teeth whitening", duration_minutes: 60 }, "Cleaning", "Checkup"] }));
    expect(spoken(await say(session, "i want to book an appointment"))).toContain("Which service would you like: Teeth whitening, Cleaning or Checkup?");
    expect(spoken(await say(session, "a hair cut"))).toContain("Sorry, I didn't catch that. Which service would you like");
    await conversation(session, ["whitning please", "monday at nine a m", "this is ann lee"]);
    expect(toolCalls(await say(session, "yes"))[0]).toMatchObject({
      arguments: { customer_name: "Ann Lee", date: "2025-03-03", time: "09:00", service: "Teeth whitening", duration_minutes: 60 },
    });
  });

  it("uses the call context's customer name instead of asking", async () => {
    const session = open(agent(), { context: { customer_name: "Maria Garcia" } });
    const confirm = await say(session, "book a cleaning on the twenty third at half past two");
    expect(spoken(confirm)).toContain("So that's a cleaning for Maria Garcia on Sunday, March 23 at 2:30 PM.");
  });

  it("resolves days in the business's time zone and never in the past", async () => {
    // 05:00 UTC is 21:00 on Friday, February 28 in Los Angeles.
    const la = agent({}, { timezone: "America/Los_Angeles" });
    const session = open(la, { now: new Date("2025-03-01T05:00:00Z") });
    expect(spoken(await say(session, "book a cleaning tomorrow at nine my name is bob"))).toContain("on Saturday, March 1 at 9:00 AM");

    const late = open(la, { now: new Date("2025-03-01T05:00:00Z") });
    expect(spoken(await say(late, "book a cleaning today at eight pm my name is bob"))).toContain("Thanks, Bob. Sorry, that time has already passed today. What time would you like on Friday?");

    // Saturday said on a Saturday is next week; "march first" on March 2 is next year.
    expect(spoken(await say(open(), "book a cleaning saturday at three my name is bob"))).toContain("on Saturday, March 8 at 3:00 PM");
    expect(spoken(await say(open(agent(), { now: new Date("2025-03-02T10:00:00Z") }), "book a cleaning march first at three my name is bob"))).toContain(
      "on Sunday, March 1, 2026 at 3:00 PM",
    );
    expect(spoken(await say(open(), "book a cleaning yesterday at three my name is bob"))).toContain("Sorry, that day has already passed. What day would you like to come in?");
  });

  it("answers FAQ entries asked in other words and says so when it has no answer", async () => {
    const session = open();
    const hours = await say(session, "what time do you open");
    expect(spoken(hours)).toBe("We are open Monday to Friday, 9 AM to 5 PM. On Saturdays we close at noon. Is there anything else I can help you with?");
    expect(hours.filter((e) => e.type === "text")).toHaveLength(3);
    expect(spoken(await say(session, "do you take insurance"))).toContain("we accept most major insurance plans");
    expect(spoken(await say(session, "parking"))).toContain("free parking behind the building");

    const miss = await say(session, "do you sell toothbrushes");
    expect(spoken(miss)).toContain("I'm sorry, I don't have an answer to that.");
    expect(spoken(miss)).not.toMatch(/insurance|parking|open Monday/);
  });

  it("notes each question it answered, for the call's analysis, after the answer's text", async () => {
    const events = await say(open(), "what time do you open");
    expect(events.at(-1)).toEqual({ type: "answered_question", question: "What are your opening hours?" });
    expect((await say(open(), "do you sell toothbrushes")).some((e) => e.type === "answered_question")).toBe(false);
  });

  it("agrees to call back, at the day and time said, and ends the call", async () => {
    const events = await say(open(), "i am busy right now please call me back tomorrow at ten thirty");
    expect(spoken(events)).toBe("Of course, we'll call you back on Sunday, March 2 at 10:30 AM. Have a great day. Goodbye.");
    expect(events.slice(-2)).toEqual([
      { type: "callback_requested", date: "2025-03-02", time: "10:30" },
      { type: "end_call", reason: "callback_requested" },
    ]);
    const later = await say(open(), "this is not a good time");
    expect(spoken(later)).toBe("Of course, we'll call you back later. Have a great day. Goodbye.");
    expect(later.at(-2)).toEqual({ type: "callback_requested", date: null, time: null });
    // The caller calling back is not a callback request; nor is asking not to be called.
    expect((await say(open(), "can i call you back")).some((e) => e.type === "callback_requested")).toBe(false);
    expect((await say(open(), "do not call me back")).at(-1)).toEqual({ type: "end_call", reason: "do_not_call" });
  });

  it("notes a phone number the caller gives instead of taking its digits for a day or time", async () => {
    expect(spoken(await say(open(), "my phone number is four one five five five five zero one nine nine"))).toBe("Thank you, I've noted your number. How can I help you today?");
    const session = open();
    await say(session, "i would like to book a cleaning");
    expect(spoken(await say(session, "you can reach me at 415 555 0199"))).toBe("Thank you, I've noted your number. What day would you like to come in?");
    expect(toolCalls()).toEqual([]);
  });

  it("thanks a callee who is not interested and ends the call, but only drops a booking in progress", async () => {
    const events = await say(open(), "i am not interested");
    expect(spoken(events)).toBe("I understand. Thank you for your time. Goodbye.");
    expect(events.at(-1)).toEqual({ type: "end_call", reason: "not_interested" });
    const session = open();
    await say(session, "i would like to book a cleaning");
    expect(spoken(await say(session, "actually i am not interested"))).toContain("Okay, I won't book anything.");
  });

  it("reads keys: 0 asks for a person, 1 and 2 answer a yes/no question, other keys are the number they spell", async () => {
    const transfer = await collect(open(agent({ transferEnabled: true, transferNumber: "+15550001111" })).respondToKeys("0", new AbortController().signal));
    expect(transfer.at(-1)).toEqual({ type: "transfer" });
    expect(spoken(await collect(open().respondToKeys("0", new AbortController().signal)))).toContain("I can't transfer you to a person right now.");

    const session = open();
    await conversation(session, ["i would like to book a cleaning", "tuesday", "my name is john smith"]);
    // "What time would you like on Tuesday?": 3 is 3 PM.
    expect(spoken(await collect(session.respondToKeys("3", new AbortController().signal)))).toContain("at 3:00 PM. Shall I book it?");
    expect(spoken(await collect(session.respondToKeys("2", new AbortController().signal)))).toContain("What would you like to change");
    await say(session, "no it is fine");
    const booked = await collect(session.respondToKeys("1", new AbortController().signal));
    expect(toolCalls(booked)).toMatchObject([{ name: "book_appointment", arguments: { time: "15:00" } }]);
    expect(spoken(booked)).toContain("is booked for");
  });

  it("presses the key of the option it wants in another company's phone menu, saying nothing", async () => {
    const keys = recordingTools();
    const withKeys = { ...keys, definitions: [{ name: "send_dtmf", description: "", parameters: {} }] };
    const menu = "thank you for calling bright dental press one for appointments press two for billing or press zero for the operator";
    // By default it wants a person; `phone_menu_choice` names another option.
    const toPerson = await say(open(agent(), { tools: withKeys }), menu);
    expect(spoken(toPerson)).toBe("");
    expect(keys.take()).toEqual([{ name: "send_dtmf", arguments: { digits: "0" } }]);
    await say(open(agent({}, { phone_menu_choice: "appointments" }), { tools: withKeys }), menu);
    expect(keys.take()).toEqual([{ name: "send_dtmf", arguments: { digits: "1" } }]);
    await say(open(agent({}, { phone_menu_choice: "billing" }), { tools: withKeys }), "for billing press two for sales press three");
    expect(keys.take()).toEqual([{ name: "send_dtmf", arguments: { digits: "2" } }]);
    // No option it wants, or no way to press keys (not a SIP call): it waits, saying nothing.
    expect(spoken(await say(open(agent({}, { phone_menu_choice: "parking" }), { tools: withKeys }), menu))).toBe("");
    expect(keys.take()).toEqual([]);
    expect(spoken(await say(open(), menu))).toBe("");
    expect(tools.take()).toEqual([]);
  });

  describe("on a reminder call", () => {
    const reminderContext = {
      purpose: "appointment_reminder",
      customer_name: "John Smith",
      appointment: { id: "apt_1", date: "2025-03-04", time: "15:00", service: "cleaning" },
    };
    const reminder = (answer?: Parameters<typeof recordingTools>[0]) => open(agent(), { context: reminderContext, ...(answer ? { tools: recordingTools(answer) } : {}) });

    it("confirms the appointment when the customer will come, and says goodbye", async () => {
      const events = await say(reminder(), "yes i will be there");
      expect(toolCalls(events)).toEqual([{ type: "tool_call", name: "confirm_appointment", arguments: {} }]);
      expect(spoken(events)).toBe("Great, thank you. We'll see you on Tuesday, March 4 at 3:00 PM. Have a great day. Goodbye.");
      expect(events.at(-1)).toEqual({ type: "end_call", reason: "appointment_confirmed" });
      // A key answers the question too.
      const keyed = reminder();
      await collect(keyed.respondToKeys("1", new AbortController().signal));
      expect(tools.take()).toEqual([{ name: "confirm_appointment", arguments: {} }]);
    });

    it("cancels it when asked", async () => {
      const events = await say(reminder(), "i need to cancel my appointment");
      expect(toolCalls(events)).toEqual([{ type: "tool_call", name: "cancel_appointment", arguments: {} }]);
      expect(spoken(events)).toBe("All right, I've cancelled your cleaning appointment on Tuesday, March 4. Thank you for letting us know. Have a great day. Goodbye.");
      expect(events.at(-1)).toEqual({ type: "end_call", reason: "appointment_cancelled" });
    });

    it("moves it to the day and time said, offering the nearest free times when that one is taken", async () => {
      const moved = await say(reminder(), "could we make it wednesday at four in the afternoon");
      expect(toolCalls(moved)).toEqual([{ type: "tool_call", name: "reschedule_appointment", arguments: { date: "2025-03-05", time: "16:00" } }]);
      expect(spoken(moved)).toBe("Done. Your cleaning appointment is now on Wednesday, March 5 at 4:00 PM. Have a great day. Goodbye.");
      expect(moved.at(-1)).toEqual({ type: "end_call", reason: "appointment_rescheduled" });

      let refusals = 1;
      const session = reminder((name, args) =>
        name === "reschedule_appointment" && refusals-- > 0
          ? { ok: false, error: "taken", data: { alternatives: [{ date: "2025-03-05", time: "16:30" }] } }
          : { ok: true, data: { status: name, ...args } },
      );
      const offered = await say(session, "could we make it wednesday at four in the afternoon");
      expect(spoken(offered)).toBe("I'm sorry, Wednesday, March 5 at 4:00 PM isn't available. The nearest free time is Wednesday, March 5 at 4:30 PM. Which day and time would suit you?");
      const taken = await say(session, "four thirty");
      // A time alone is on the day last asked for.
      expect(tools.take().at(-1)).toEqual({ name: "reschedule_appointment", arguments: { date: "2025-03-05", time: "16:30" } });
      expect(spoken(taken)).toContain("Your cleaning appointment is now on Wednesday, March 5 at 4:30 PM.");
    });

    it("asks whether to cancel or move it on a plain no, and does what the answer says", async () => {
      const session = reminder();
      expect(spoken(await say(session, "no"))).toBe("No problem. Would you like to cancel it, or move it to another day and time?");
      expect(toolCalls()).toEqual([]);
      await say(session, "cancel it please");
      expect(tools.take()).toEqual([{ name: "cancel_appointment", arguments: {} }]);
      expect(spoken(await say(reminder(), "i cannot make it"))).toContain("Would you like to cancel it, or move it");
    });

    it("says truthfully when the change could not be made", async () => {
      const events = await say(reminder(() => ({ ok: false, error: "database down" })), "yes");
      expect(spoken(events)).toBe("I'm sorry, I couldn't note that just now, but your appointment stays as it is. Have a great day. Goodbye.");
      expect(events.at(-1)).toEqual({ type: "end_call", reason: "agent_ended" });
    });
  });

  it("answers an FAQ in the middle of a booking and goes back to it", async () => {
    const session = open();
    await say(session, "i need to book a cleaning");
    expect(spoken(await say(session, "is there parking"))).toBe("Yes, there is free parking behind the building. What day would you like to come in?");
  });

  it("transfers to a human when transfer is enabled", async () => {
    const session = open(agent({ transferEnabled: true, transferNumber: "+15550001111" }));
    const events = await say(session, "can i speak to a representitive please");
    expect(spoken(events)).toBe("Please hold while I transfer you to a member of our team.");
    expect(events[events.length - 1]).toEqual({ type: "transfer" });
  });

  it("says it cannot transfer when transfer is disabled", async () => {
    const events = await say(open(), "i want to talk to a real person");
    expect(events.some((e) => e.type === "transfer")).toBe(false);
    expect(spoken(events)).toContain("I'm sorry, I can't transfer you to a person right now.");
    expect(spoken(events)).toContain("I can book an appointment or answer questions about Bright Smile Dental.");
  });

  it("tells a caller who asks whether it is a person that it is automated, without transferring", async () => {
    const events = await say(open(agent({ transferEnabled: true })), "are you a real person");
    expect(events.some((e) => e.type === "transfer")).toBe(false);
    expect(spoken(events)).toContain("I'm Ava, an automated assistant for Bright Smile Dental.");
  });

  it("ends the call on goodbye", async () => {
    for (const line of ["bye", "ok thanks goodbye", "no thanks that's it"]) {
      const events = await say(open(), line);
      expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "caller_goodbye" });
      expect(spoken(events)).toBe("Thanks for calling Bright Smile Dental. Have a great day. Goodbye.");
    }
  });

  it("ends the call on the agent's own end-call phrases", async () => {
    const events = await say(open(agent({ endCallPhrases: ["I'm all done here"] })), "ok i'm all done here");
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "caller_goodbye" });
  });

  it("confirms and hangs up when the callee asks not to be called again, even in the middle of a booking", async () => {
    const session = open();
    await say(session, "i would like to book an appointment");
    const events = await say(session, "actually please stop calling me and take me off your list");
    expect(toolCalls(events)).toEqual([{ type: "tool_call", name: "do_not_call", arguments: {} }]);
    expect(spoken(events)).toBe("I understand, and I'm sorry for the trouble. I've taken your number off our calling list, so we won't call you again. Goodbye.");
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "do_not_call" });
  });

  it("does not claim the number was listed when listing it failed", async () => {
    const session = open(agent(), { tools: recordingTools(() => ({ ok: false, error: "do_not_call failed on our side; nothing was done" })) });
    const events = await say(session, "stop calling me");
    expect(spoken(events)).not.toContain("taken your number off");
    expect(spoken(events)).toContain("wasn't able to update our calling list");
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "do_not_call" });
  });

  it("says booked only once the booking is stored, and offers the free times when the slot is taken", async () => {
    const answers: Array<(name: string) => ToolResult> = [
      () => ({ ok: false, error: "that time is already taken", data: { reason: "slot_taken", alternatives: [{ date: "2025-03-04", time: "15:30" }, { date: "2025-03-05", time: "09:00" }] } }),
      () => ({ ok: true, data: { status: "booked" } }),
    ];
    const session = open(agent(), { tools: recordingTools((name) => answers.shift()!(name)) });
    await say(session, "i'd like a cleaning on tuesday at three pm my name is jane doe");
    const refused = await say(session, "yes");
    expect(toolCalls(refused)).toHaveLength(1);
    expect(spoken(refused)).toBe(
      "I'm sorry, Tuesday, March 4 at 3:00 PM isn't available. The nearest free times are Tuesday, March 4 at 3:30 PM or Wednesday, March 5 at 9:00 AM. Which day and time would suit you?",
    );
    expect(spoken(refused)).not.toContain("booked");
    // The caller picks one: the agent confirms it with the service and name kept, then books it.
    const again = await say(session, "wednesday at nine am");
    expect(spoken(again)).toContain("So that's a cleaning for Jane Doe on Wednesday, March 5 at 9:00 AM. Shall I book it?");
    const booked = await say(session, "yes");
    expect(toolCalls(booked)[0]).toMatchObject({ arguments: { date: "2025-03-05", time: "09:00", customer_name: "Jane Doe" } });
    expect(spoken(booked)).toContain("booked for Wednesday, March 5 at 9:00 AM");
  });

  it("says it could not book when the booking fails, and drops it", async () => {
    const session = open(agent(), { tools: recordingTools(() => ({ ok: false, error: "book_appointment failed on our side; nothing was done" })) });
    await say(session, "i'd like a cleaning on tuesday at three pm my name is jane doe");
    const failed = await say(session, "yes");
    expect(spoken(failed)).toBe("I'm sorry, I wasn't able to book that appointment just now. Is there anything else I can help you with?");
  });

  it("leaves a default message on an answering machine and ends the call for reason voicemail", async () => {
    const events = await say(open(), "hi you have reached john smith i cannot take your call right now please leave a message after the tone");
    expect(spoken(events)).toBe("Hi, this is Bright Smile Dental calling. Please call us back at your convenience. Goodbye.");
    expect(events.filter((e) => e.type === "text")).toHaveLength(3);
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "voicemail" });
    expect(toolCalls(events)).toHaveLength(0);
  });

  it("names the agent and greets the callee by name in the default message when it knows them", async () => {
    const events = await say(open(agent({}, { business_name: undefined }), { context: { customer_name: "John Smith" } }), "you have reached john please leave a message");
    expect(spoken(events)).toBe("Hi John, this is Ava calling. Please call us back at your convenience. Goodbye.");
  });

  it("leaves the agent's voicemail_message, with its placeholders filled from metadata and context", async () => {
    const settings = agent({}, { voicemail_message: "Hello {{customer_name}}, this is {{business_name}} about your appointment. Please call us back. Goodbye." });
    const events = await say(open(settings, { context: { customer_name: "John" } }), "Hi, you've reached John. I can't come to the phone. Leave your message after the beep.");
    expect(spoken(events)).toBe("Hello John, this is Bright Smile Dental about your appointment. Please call us back. Goodbye.");
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "voicemail" });
    // A placeholder without a value is dropped; a blank message falls back to the default.
    expect(spoken(await say(open(settings), "please leave a message after the tone"))).toBe(
      "Hello, this is Bright Smile Dental about your appointment. Please call us back. Goodbye.",
    );
    expect(spoken(await say(open(agent({}, { voicemail_message: "  " })), "please leave a message after the tone"))).toBe(
      "Hi, this is Bright Smile Dental calling. Please call us back at your convenience. Goodbye.",
    );
  });

  it("goes on with the call when a caller mentions a voicemail or a message", async () => {
    for (const line of ["hi i got your voicemail", "i got your voicemail and i am calling to return your call", "can i leave a message for the dentist"]) {
      const events = await say(open(), line);
      expect(events.some((e) => e.type === "end_call"), line).toBe(false);
    }
    const session = open();
    await say(session, "hi i got your voicemail");
    expect(spoken(await say(session, "i would like to book an appointment"))).toContain("Sure, I can help you book an appointment.");
  });

  it("ends after 'nothing else' once booked", async () => {
    const session = open();
    await conversation(session, ["i'd like a cleaning tomorrow at three pm my name is jane doe", "yes"]);
    const events = await say(session, "no i'm good");
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "caller_goodbye" });
  });

  it("does not book on a yes to a confirmation the caller did not hear in full", async () => {
    const session = open();
    const confirm = await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    expect(spoken(confirm)).toContain("Shall I book it?");
    session.truncateLastReply("Sure, I can help you book an appointment. Thanks, Jane. So that's a cleaning for Jane Doe");

    const yes = await say(session, "yes");
    expect(toolCalls(yes)).toEqual([]);
    expect(spoken(yes)).toContain("So that's a cleaning for Jane Doe on Sunday, March 2 at 3:00 PM. Shall I book it?");
    expect(toolCalls(await say(session, "yes"))).toHaveLength(1);
  });

  it("books on a yes when the whole confirmation was heard", async () => {
    const session = open();
    const confirm = await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    session.truncateLastReply(spoken(confirm));
    expect(toolCalls(await say(session, "yes"))).toHaveLength(1);
  });

  it("returns at once when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const session = open();
    expect(await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe", controller.signal)).toEqual([]);
    // The turn never happened: the next turn starts the booking afresh.
    expect(spoken(await say(session, "hello"))).toBe("Hi, thanks for calling Bright Smile Dental. How can I help you today?");
  });

  it("stops between events when aborted, and an unsent question is not pending", async () => {
    const session = open();
    const controller = new AbortController();
    const events: DialogueEvent[] = [];
    for await (const event of session.respond("i'd like a cleaning tomorrow at three pm my name is jane doe", controller.signal)) {
      events.push(event);
      controller.abort();
    }
    expect(events).toEqual([{ type: "text", text: "Sure, I can help you book an appointment." }]);
    expect(toolCalls(await say(session, "yes"))).toEqual([]);
  });

  it("offers a transfer after three misunderstandings when transfer is enabled", async () => {
    const session = open(agent({ transferEnabled: true }));
    expect(spoken(await say(session, "purple monkey dishwasher"))).toContain("Sorry, I didn't catch that.");
    expect(spoken(await say(session, "blue giraffe"))).toContain("Sorry, I still didn't get that.");
    expect(spoken(await say(session, "green elephant"))).toContain("Would you like me to put you through to someone?");
    const events = await say(session, "yes please");
    expect(events[events.length - 1]).toEqual({ type: "transfer" });
  });

  it("ends politely after three misunderstandings when transfer is disabled", async () => {
    const events = await conversation(open(), ["purple monkey dishwasher", "blue giraffe", "green elephant"]);
    expect(spoken(events)).toContain("I'm sorry, I'm having trouble understanding you on this line.");
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "not_understood" });
  });

  it("counts only consecutive misunderstandings", async () => {
    const events = await conversation(open(), ["purple monkey dishwasher", "blue giraffe", "hello", "green elephant", "red zebra"]);
    expect(events.some((e) => e.type === "end_call")).toBe(false);
  });

  it("books and ends the call on 'yes, bye' at the confirmation", async () => {
    const session = open();
    await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    const events = await say(session, "okay great thanks bye");
    expect(toolCalls(events)[0]).toMatchObject({ type: "tool_call", name: "book_appointment" });
    expect(spoken(events)).toContain("Your cleaning is booked for Sunday, March 2 at 3:00 PM. Thanks for calling Bright Smile Dental.");
    expect(events[events.length - 1]).toEqual({ type: "end_call", reason: "caller_goodbye" });
  });

  it("does not count noise from the recognizer as a misunderstanding", async () => {
    const events = await conversation(open(), ["purple monkey dishwasher", "blue giraffe", "um", "<sil>", "", "uh"]);
    expect(spoken(events)).toContain("Sorry, I didn't catch that.");
    expect(events.some((e) => e.type === "end_call")).toBe(false);
  });

  it("repeats its last reply when asked", async () => {
    const session = open();
    const confirm = await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    expect(spoken(await say(session, "sorry can you repeat that"))).toBe(spoken(confirm));
    expect(toolCalls(await say(session, "yes"))).toHaveLength(1);
  });

  it("drops the booking in progress when the caller cancels", async () => {
    const session = open();
    await say(session, "i'd like a cleaning tomorrow at three pm my name is jane doe");
    expect(spoken(await say(session, "actually never mind"))).toContain("Okay, I won't book anything.");
    expect(toolCalls(await say(session, "yes"))).toEqual([]);
  });

  it("only books new appointments", async () => {
    const events = await say(open(), "i need to cancel my appointment");
    expect(spoken(events)).toContain("I can only book new appointments");
    expect(toolCalls(events)).toEqual([]);
  });

  it("greets the caller by the name they give", async () => {
    expect(spoken(await say(open(), "hi this is jane"))).toBe("Hi Jane, thanks for calling Bright Smile Dental. How can I help you today?");
  });

  it("opens the call when asked to respond to nothing first", async () => {
    expect(spoken(await say(open(agent({}, { business_name: undefined })), ""))).toBe("Hi, this is Ava. How can I help you today?");
  });

  it("reads punctuated, capitalised recognizer output too", async () => {
    const session = open();
    const events = await say(session, "Hi, I'd like to book a cleaning for Tuesday at 3 PM. My name's John Smith.");
    expect(spoken(events)).toContain("So that's a cleaning for John Smith on Tuesday, March 4 at 3:00 PM.");
  });
});
