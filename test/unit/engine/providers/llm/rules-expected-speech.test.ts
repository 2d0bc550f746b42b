import { describe, expect, it } from "vitest";
import { createRulesDialogueProvider } from "../../../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import { recordingTools, say, spoken, testAgent } from "../../../../helpers/dialogue.js";

/** Saturday, March 1, 2025, 10:00 UTC. */
const NOW = new Date("2025-03-01T10:00:00Z");
const FAQ = [{ question: "What are your opening hours?", answer: "We are open Monday to Friday, 9 AM to 5 PM." }];

function open(metadata: Record<string, unknown> = { services: ["Cleaning", "Teeth Whitening"], faq: FAQ }, context: Record<string, unknown> = {}) {
  const agent = testAgent({ metadata: { business_name: "Bright Smile Dental", ...metadata } });
  return createRulesDialogueProvider({ now: () => NOW }).open({ agent, context, tools: recordingTools() });
}

describe("what the rules dialogue tells the recognizer to listen for", () => {
  it("follows its questions through a booking: the service, the day, the time, the name, yes or no", async () => {
    const session = open();
    // "How can I help?" may be answered with anything.
    expect(session.expectedSpeech!()).toBeNull();
    await say(session, "i would like to book an appointment");
    expect(session.expectedSpeech!()).toEqual({ answer: "service", services: ["Cleaning", "Teeth Whitening"], names: [] });
    await say(session, "a cleaning");
    expect(session.expectedSpeech!()?.answer).toBe("date");
    await say(session, "tuesday");
    expect(session.expectedSpeech!()?.answer).toBe("time");
    await say(session, "at three in the afternoon");
    expect(session.expectedSpeech!()?.answer).toBe("name");
    expect(spoken(await say(session, "my name is john smith"))).toMatch(/\?$/);
    expect(session.expectedSpeech!()?.answer).toBe("yes_no");
    await say(session, "yes");
    // "Anything else?" may be answered with anything.
    expect(session.expectedSpeech!()).toBeNull();
  });

  it("offers the names it already has for the caller", async () => {
    const session = open(undefined, { customer_name: "Maria Garcia" });
    await say(session, "i would like to book a cleaning");
    expect(session.expectedSpeech!()?.names).toEqual(["Maria Garcia"]);
  });

  it("expects nothing in particular after a question the caller did not hear in full", async () => {
    const session = open();
    await say(session, "i would like to book a cleaning");
    expect(session.expectedSpeech!()?.answer).toBe("date");
    session.truncateLastReply("What day");
    expect(session.expectedSpeech!()).toBeNull();
  });
});
