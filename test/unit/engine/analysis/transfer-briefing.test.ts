import { describe, expect, it } from "vitest";
import { transferBriefing } from "../../../../engine/analysis/transfer-briefing.js";

const base = { agentName: "Ava", businessName: "Acme Dental" };
const said = (content: string, timestamp = 1) => ({ role: "user" as const, content, timestamp });

describe("the briefing of a warm transfer", () => {
  it("says who calls for whom, what the call did, and the caller's last words", () => {
    expect(
      transferBriefing({
        ...base,
        transcript: [said("do you have parking"), said("[pressed 0]", 5)],
        actions: [{ type: "answered_question", question: "Do you have parking?" }, { type: "transfer" }],
      }),
    ).toBe("Hello, this is Ava from Acme Dental, with a caller for you. I answered their question: do you have parking. They said: do you have parking. I am connecting you now.");
    expect(
      transferBriefing({
        agentName: "Ava",
        businessName: null,
        transcript: [],
        actions: [{ type: "tool_call", name: "book_appointment", arguments: {}, result: { ok: true, data: { status: "booked" } } }],
      }),
    ).toBe("Hello, this is Ava, with a caller for you. They booked an appointment on this call. I am connecting you now.");
  });

  it("quotes the last turns that fit, newest last, and cuts one long turn at a word", () => {
    const turns = [said("first thing"), said("second thing"), said("third thing")];
    expect(transferBriefing({ ...base, transcript: turns, actions: [] })).toContain("They said: first thing, second thing, third thing.");
    const long = `${"word ".repeat(80)}end`;
    const briefing = transferBriefing({ ...base, transcript: [said(long)], actions: [] });
    const quoted = /They said: (.*)\. I am/.exec(briefing)![1]!;
    expect(quoted.length).toBeLessThanOrEqual(240);
    expect(quoted.endsWith("word")).toBe(true);
  });
});
