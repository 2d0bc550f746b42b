import { describe, expect, it } from "vitest";
import { similarWords } from "../../../../../../engine/providers/llm/rules/similar-words.js";
import { wordsMatch } from "../../../../../../engine/providers/llm/rules/word-match.js";

describe("similarWords", () => {
  it("forgives one slip in words of six letters and two in words of nine", () => {
    expect(similarWords("operater", "operator")).toBe(true);
    expect(similarWords("apointment", "appointment")).toBe(true);
    expect(similarWords("representitive", "representative")).toBe(true);
    expect(similarWords("insurence", "insurance")).toBe(true);
  });

  it("keeps short and different words apart", () => {
    expect(similarWords("bye", "by")).toBe(false);
    expect(similarWords("clean", "clear")).toBe(false);
    expect(similarWords("operate", "operator")).toBe(false);
    expect(similarWords("booking", "cooking")).toBe(false);
  });
});

describe("wordsMatch", () => {
  it("matches stems and slips", () => {
    expect(wordsMatch("hours", "hour")).toBe(true);
    expect(wordsMatch("opening", "open")).toBe(true);
    expect(wordsMatch("cleanings", "cleaning")).toBe(true);
    expect(wordsMatch("whitning", "whitening")).toBe(true);
    expect(wordsMatch("parking", "office")).toBe(false);
  });
});
