import { describe, expect, it } from "vitest";
import { createRulesDialogueProvider } from "../../../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import { recordingTools, say, spoken, testAgent } from "../../../../helpers/dialogue.js";

/** Saturday, March 1, 2025, 10:00 UTC. */
const NOW = new Date("2025-03-01T10:00:00Z");
const FAQ = [{ question: "What are your opening hours?", answer: "We are open Monday to Friday, 9 AM to 5 PM." }];

function open() {
  const agent = testAgent({ systemPrompt: "You book dental appointments.", metadata: { business_name: "Bright Smile Dental", faq: FAQ } });
  return createRulesDialogueProvider({ now: () => NOW }).open({ agent, context: {}, tools: recordingTools() });
}

describe("the rules dialogue's judgement of the caller's words so far (adaptive endpointing)", () => {
  it("calls a request or a question it can answer complete, words ending open incomplete, and words it would not understand unknown", () => {
    const session = open();
    expect(session.judgeTurn!("i would like to book an appointment")).toBe("complete");
    expect(session.judgeTurn!("what are your opening hours")).toBe("complete");
    expect(session.judgeTurn!("i would like to come in on")).toBe("incomplete");
    expect(session.judgeTurn!("i need a")).toBe("incomplete");
    expect(session.judgeTurn!("um")).toBe("incomplete");
    expect(session.judgeTurn!("purple elephants sing")).toBe("unknown");
  });

  it("waits the longest after an answering machine's greeting: the message must come after the beep", () => {
    expect(open().judgeTurn!("hi you have reached john smith i cannot take your call right now please leave a message after the tone")).toBe("incomplete");
  });

  it("judges an answer by the question the agent asked: a day and time after it asked for one, a yes or no after a confirmation", async () => {
    const session = open();
    await say(session, "i would like to book a cleaning");
    await say(session, "my name is john smith");
    // The agent has asked for a day and time.
    expect(session.judgeTurn!("tuesday at three in the afternoon")).toBe("complete");
    expect(session.judgeTurn!("tuesday at")).toBe("incomplete");
    const confirm = spoken(await say(session, "tuesday at three in the afternoon"));
    expect(confirm).toMatch(/\?$/);
    expect(session.judgeTurn!("yes")).toBe("complete");
    expect(session.judgeTurn!("no")).toBe("complete");
  });

  it("changes nothing in the conversation: the reply after any number of judgements is the one without them", async () => {
    const judged = open();
    const plain = open();
    for (const session of [judged, plain]) await say(session, "i would like to book a cleaning");
    for (const words of ["my name is john smith", "tuesday at three", "yes", "cancel that", "purple elephants sing", "what are your opening hours"]) judged.judgeTurn!(words);
    for (const line of ["my name is john smith", "tuesday at three in the afternoon", "yes"]) {
      expect(spoken(await say(judged, line))).toBe(spoken(await say(plain, line)));
    }
  });
});
