import { describe, expect, it } from "vitest";
import { buildFaqIndex, matchFaq } from "../../../../../../engine/providers/llm/rules/faq-matcher.js";
import { toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";

const index = buildFaqIndex([
  { question: "What are your opening hours?", answer: "hours" },
  { question: "Do you accept insurance?", answer: "insurance" },
  { question: "How much does a cleaning cost?", answer: "price" },
  { question: "Is there parking near the office?", answer: "parking" },
  { question: "What?", answer: "nothing to match" },
]);

const answer = (text: string) => matchFaq(index, toUtterance(text))?.answer ?? null;

describe("matchFaq", () => {
  it.each([
    ["what are your opening hours", "hours"],
    ["when do you open", "hours"],
    ["what time do you open", "hours"],
    ["do you take insurance", "insurance"],
    ["do you accept my insurence", "insurance"],
    ["how much is a cleaning", "price"],
    ["how much does it cost to get a cleaning", "price"],
    ["parking", "parking"],
    ["where can i park", "parking"],
  ])("%s -> %s", (text, expected) => expect(answer(text)).toBe(expected));

  it.each(["do you sell toothbrushes", "what", "i would like to book an appointment", "my name is john smith", ""])("no answer for %s", (text) =>
    expect(answer(text)).toBeNull(),
  );
});
