import { describe, expect, it } from "vitest";
import { hasPhrase, toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";

describe("toUtterance", () => {
  it("lower-cases, drops punctuation and recognizer markers, and spells out contractions", () => {
    expect(toUtterance("Hi! I'd like to book, please.").text).toBe("hi i would like to book please");
    expect(toUtterance("<s> yes <sil> [noise] that's right ++breath++ </s>").text).toBe("yes that is right");
    expect(toUtterance("It’s 3:30 p.m.").text).toBe("it is 3:30 p m");
    expect(toUtterance("thats all im done").text).toBe("that is all i am done");
    expect(toUtterance("You've reached us; we'll call back.").text).toBe("you have reached us we will call back");
    expect(toUtterance("peter o'brien's").words).toEqual(["peter", "o'brien's"]);
    expect(toUtterance("'quoted'").text).toBe("quoted");
    expect(toUtterance("   ").words).toEqual([]);
  });

  it("matches whole words only", () => {
    const u = toUtterance("goodbye then");
    expect(hasPhrase(u, "goodbye")).toBe(true);
    expect(hasPhrase(u, "bye")).toBe(false);
    expect(hasPhrase(u, "goodbye then")).toBe(true);
  });
});
