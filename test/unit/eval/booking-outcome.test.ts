import { describe, expect, it } from "vitest";
import { bookingOf } from "../../../scripts/eval/booking-outcome.js";
import { bookingConversations } from "../../../scripts/eval/hearing-corpus.js";

// The hearing evaluation scores what recognized speech books against what the conversation
// asks for: the words themselves, unrecognized, must book exactly that, or a miss would be
// the scorer's and not the recognizer's.
describe("the hearing evaluation's conversations", () => {
  it.each(["dev", "test"] as const)("book what they ask for when heard perfectly (%s set)", async (set) => {
    const conversations = bookingConversations(set, 12);
    const wrong: string[] = [];
    for (const conversation of conversations) {
      const booked = await bookingOf(conversation.lines);
      if (JSON.stringify(booked) !== JSON.stringify(conversation.expected)) wrong.push(`${conversation.lines.join(" / ")} -> ${JSON.stringify(booked)}, expected ${JSON.stringify(conversation.expected)}`);
    }
    expect(wrong).toEqual([]);
  });

  it("keep the sets apart: no phrasing, name or voice of the test set is in the development set", () => {
    const [dev, test] = [bookingConversations("dev", 12), bookingConversations("test", 12)];
    const devLines = new Set(dev.flatMap((c) => c.lines));
    expect(test.flatMap((c) => c.lines).filter((line) => devLines.has(line))).toEqual([]);
    const devNames = new Set(dev.map((c) => c.expected.customer_name));
    expect(test.filter((c) => devNames.has(c.expected.customer_name))).toEqual([]);
    const devVoices = new Set(dev.map((c) => c.voice));
    expect(test.filter((c) => devVoices.has(c.voice))).toEqual([]);
  });
});
