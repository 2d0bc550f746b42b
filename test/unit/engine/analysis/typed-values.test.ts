import { describe, expect, it } from "vitest";
import type { AnalysisField } from "../../../../engine/analysis/call-analysis.js";
import { readEmail, readPhone, readValue, type ValueContext } from "../../../../engine/analysis/typed-values.js";

// Wednesday 2026-11-25, 10:00 at the business.
const context: ValueContext = {
  clock: { date: { year: 2026, month: 11, day: 25 }, time: { hour: 10, minute: 0 } },
  defaultCountry: "US",
  answering: false,
  fieldWords: [],
};

const field = (type: AnalysisField["type"], extra: Partial<AnalysisField> = {}): AnalysisField => ({ name: "f", type, description: "", ...extra });

describe("typed value readers", () => {
  it("read dates and times the way the booking dialogue does", () => {
    expect(readValue(field("date"), "tuesday at three in the afternoon", context)).toBe("2026-12-01");
    expect(readValue(field("date"), "tomorrow please", context)).toBe("2026-11-26");
    expect(readValue(field("date"), "the twenty third of december", context)).toBe("2026-12-23");
    expect(readValue(field("date"), "i am not sure", context)).toBeNull();
    expect(readValue(field("time"), "tuesday at three in the afternoon", context)).toBe("15:00");
    expect(readValue(field("time"), "ten thirty", context)).toBe("10:30");
    expect(readValue(field("time"), "nine a m", context)).toBe("09:00");
    expect(readValue(field("time"), "whenever suits you", context)).toBeNull();
  });

  it("read the one number said, spoken or written, and nothing when two differ", () => {
    expect(readValue(field("number"), "there will be three of us", context)).toBe(3);
    expect(readValue(field("number"), "about 2.5 hours", context)).toBe(2.5);
    expect(readValue(field("number"), "twenty one", context)).toBe(21);
    expect(readValue(field("number"), "two or three", context)).toBeNull();
    expect(readValue(field("number"), "a few of us", context)).toBeNull();
  });

  it("read emails written or spoken, and do not guess a local part of two words", () => {
    expect(readEmail("You can reach me at John.Smith@Example.com thanks")).toBe("john.smith@example.com");
    expect(readEmail("my email is john at gmail dot com")).toBe("john@gmail.com");
    expect(readEmail("it is john dot smith at mail dot example dot org")).toBe("john.smith@mail.example.org");
    expect(readEmail("my email is j o h n at gmail dot com")).toBe("john@gmail.com");
    expect(readEmail("email me at sales at acme dot co dot uk")).toBe("sales@acme.co.uk");
    expect(readEmail("my email is john smith at yahoo dot com")).toBeNull();
    expect(readEmail("i will be there at three")).toBeNull();
    expect(readEmail("a@b.com or c@d.com")).toBeNull();
  });

  it("read phone numbers written or said digit by digit, as E.164 of the call's country", () => {
    expect(readPhone("my phone number is four one five five five five zero one nine nine", "US")).toBe("+14155550199");
    expect(readPhone("call me on (415) 555-0199", "US")).toBe("+14155550199");
    expect(readPhone("it is four one five double five five oh one nine nine", "US")).toBe("+14155550199");
    expect(readPhone("plus four four two zero seven nine four six zero nine five eight", "US")).toBe("+442079460958");
    expect(readPhone("room three two one", "US")).toBeNull();
    expect(readPhone("no phone here", "US")).toBeNull();
  });

  it("read yes and no as an answer, and a statement naming the field as true unless negated", () => {
    expect(readValue(field("boolean"), "yes please", { ...context, answering: true })).toBe(true);
    expect(readValue(field("boolean"), "no it is not", { ...context, answering: true })).toBe(false);
    expect(readValue(field("boolean"), "hmm let me think", { ...context, answering: true })).toBeNull();
    expect(readValue(field("boolean"), "i am a new patient", context)).toBe(true);
    expect(readValue(field("boolean"), "i am not a new patient", context)).toBe(false);
  });

  it("read the one enum value named, preferring the more specific one", () => {
    const plan = field("enum", { enum: ["basic", "premium", "premium plus"] });
    expect(readValue(plan, "i would like the premium one", context)).toBe("premium");
    expect(readValue(plan, "premium plus please", context)).toBe("premium plus");
    expect(readValue(plan, "basic or premium", context)).toBeNull();
    expect(readValue(plan, "whatever is cheapest", context)).toBeNull();
  });

  it("read free text after the field's words, or a whole answer", () => {
    const insurer = field("string");
    expect(readValue(insurer, "my insurance provider is blue cross", { ...context, fieldWords: ["insurance", "provider"] })).toBe("blue cross");
    expect(readValue(insurer, "it is blue cross", { ...context, answering: true, fieldWords: ["insurance", "provider"] })).toBe("blue cross");
    expect(readValue(insurer, "i do not know", { ...context, fieldWords: ["insurance", "provider"] })).toBeNull();
  });
});
