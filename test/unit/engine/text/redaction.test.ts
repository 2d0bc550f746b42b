import { describe, expect, it } from "vitest";
import { patternMatches } from "../../../../engine/text/redaction/custom-pattern.js";
import { redactJson, redactText } from "../../../../engine/text/redaction/redact-text.js";
import { REDACTION_KINDS, checkRedactSetting, compileRedaction, type RedactSetting } from "../../../../engine/text/redaction/redaction-rules.js";
import { findSensitiveSpans } from "../../../../engine/text/redaction/sensitive-spans.js";

// A fixed "today" (2026-03-10) so that dates of birth and future appointments stay what they are.
const now = () => Date.UTC(2026, 2, 10, 12);
const all = compileRedaction([...REDACTION_KINDS], { now });
const redact = (text: string, setting: RedactSetting = [...REDACTION_KINDS]) =>
  redactText(text, setting.length === REDACTION_KINDS.length ? all : compileRedaction(setting, { now })).text;
const cases = (pairs: [string, string][], setting?: RedactSetting) =>
  it.each(pairs)("%s", (input, output) => expect(redact(input, setting)).toBe(output));

describe("card numbers", () =>
  cases([
    // pocketsphinx: digits one by one, in the middle of a sentence.
    ["yes my card number is four one one one one one one one one one one one one one one one thanks", "yes my card number is [card_number] thanks"],
    ["it's four two four two four two four two four two four two four two four two", "it's [card_number]"],
    // a chat model writes digits in groups.
    ["My card is 4111 1111 1111 1111, expiring next year.", "My card is [card_number], expiring next year."],
    ["card number 5500-0000-0000-0004", "card number [card_number]"],
    // grouped the way people read a card aloud.
    ["it's forty one eleven eleven eleven eleven eleven eleven eleven", "it's [card_number]"],
    // a misheard digit fails the Luhn check but is still hidden.
    ["four one one one one one one one one one one one one one one two", "[card_number]"],
    // an American Express number: 15 digits, "oh" for zero, "double".
    ["three seven eight two eight two two four six three one oh double oh five", "[card_number]"],
    // a hesitation inside the number does not leave its first group visible.
    ["yeah the card is four five three two uh one one one one two two two two three three three three", "yeah the card is [card_number]"],
    ["it's four five three two, one one one one, two two two two, three three three three", "it's [card_number]"],
    // the card said with its expiry and code in one breath: more than 19 digits, all hidden.
    ["4111 1111 1111 1111 12 28 123", "[card_number]"],
  ]));

describe("social security numbers", () =>
  cases([
    ["my social security number is one two three four five six seven eight nine", "my social security number is [ssn]"],
    ["SSN: 123-45-6789.", "SSN: [ssn]."],
    ["it's one two three, forty five, six seven eight nine", "it's [ssn]"],
    ["the last four of my social are six seven eight nine", "the last four of my social are [ssn]"],
    // 4 digits without the cue are nothing (a PIN-like code is the account's own rule to add).
    ["the last four digits of the order are six seven eight nine", "the last four digits of the order are six seven eight nine"],
  ]));

describe("phone numbers", () =>
  cases([
    ["you can reach me at four one five five five five oh one nine nine", "you can reach me at [phone_number]"],
    ["call me back on (415) 555-0199 after five", "call me back on [phone_number] after five"],
    ["my number is plus four four two oh seven nine four six oh nine five eight", "my number is [phone_number]"],
    ["The caller's number is +1 415 555 0199.", "The caller's number is [phone_number]."],
    ["it's five five five double two three four", "it's [phone_number]"],
    ["one eight hundred five five five oh one nine nine", "[phone_number]"],
    ["four fifteen five five five oh one nine nine", "[phone_number]"],
    ["can you call me back at eight one eight two three four five six seven eight", "can you call me back at [phone_number]"],
    ["you can email me at john.smith@gmail.com or call 212-555-0147", "you can email me at [email] or call [phone_number]"],
    ["it's 555-1234", "it's [phone_number]"],
  ]));

describe("email addresses", () =>
  cases([
    ["my email is john dot smith at example dot com", "my email is [email]"],
    ["Email: jane.doe+calls@example.co.uk", "Email: [email]"],
    ["it's j underscore doe at mail dot co dot uk", "it's [email]"],
    ["sure it's mary jones at gmail dot com thank you", "sure it's [email] thank you"],
    ["send it to bob at example.com please", "send it to [email] please"],
    ["my email address is s m i t h j at hotmail dot com", "my email address is [email]"],
    ["it's john smith eighty five at yahoo dot com", "it's [email]"],
  ]));

describe("dates of birth", () =>
  cases([
    ["my date of birth is march third nineteen eighty five", "my date of birth is [date_of_birth]"],
    ["DOB 03/04/1985", "DOB [date_of_birth]"],
    ["born 1985-03-04 in Ohio", "born [date_of_birth] in Ohio"],
    ["it's the 3rd of March 1985", "it's the [date_of_birth]"],
    ["march third nineteen eighty five", "[date_of_birth]"],
    ["um it's july fourth two thousand and one", "um it's [date_of_birth]"],
    ["my birthday is march fifth", "my birthday is [date_of_birth]"],
    ["i was born in nineteen seventy two", "i was born in [date_of_birth]"],
    ["d o b is oh three oh four eighty five", "d o b is [date_of_birth]"],
    ["the date of birth on file is the twenty first of june", "the date of birth on file is the [date_of_birth]"],
    ["I was born on the fourth of july nineteen ninety", "I was born on the [date_of_birth]"],
    ["my birthday's january first", "my birthday's [date_of_birth]"],
    ["Date of birth: 04/12/1979", "Date of birth: [date_of_birth]"],
    ["my date of birth is twelve fifteen eighty", "my date of birth is [date_of_birth]"],
  ]));

describe("left alone", () =>
  cases([
    ["can i come in thursday at ten am", "can i come in thursday at ten am"],
    ["how about march fifth at two thirty", "how about march fifth at two thirty"],
    ["I'd like to book for March 5th at 3:30 PM.", "I'd like to book for March 5th at 3:30 PM."],
    // a future appointment said with its year is not a date of birth.
    ["your appointment is on april second twenty twenty six", "your appointment is on april second twenty twenty six"],
    ["my order number is four five one two two nine", "my order number is four five one two two nine"],
    ["order 451229 hasn't arrived", "order 451229 hasn't arrived"],
    ["we're open nine to five monday to friday", "we're open nine to five monday to friday"],
    ["i'll be there at five oh five", "i'll be there at five oh five"],
    ["we close at five. Call us tomorrow", "we close at five. Call us tomorrow"],
    ["i'm looking at the dot matrix printer", "i'm looking at the dot matrix printer"],
    ["it costs one hundred twenty five dollars", "it costs one hundred twenty five dollars"],
    ["there were three of us, me and two kids aged four and seven", "there were three of us, me and two kids aged four and seven"],
    ["i need to reschedule my appointment from march fifth to march twelfth", "i need to reschedule my appointment from march fifth to march twelfth"],
    ["my zip code is nine four one zero three", "my zip code is nine four one zero three"],
    ["Thanks for calling! Your confirmation number is 8 4 7 2 9 1.", "Thanks for calling! Your confirmation number is 8 4 7 2 9 1."],
    ["oh I see, oh okay, one moment", "oh I see, oh okay, one moment"],
    ["I'm at the store right now", "I'm at the store right now"],
  ]));

// Known over-redaction, kept visible here: a number of a phone number's length is hidden whatever
// it is, and a past date with its year cannot be told from a birth date.
describe("hidden although not what the kind says", () =>
  cases([
    ["I'm calling about policy 2024-118833", "I'm calling about policy [phone_number]"],
    ["my member number is double seven double three nine one two", "my member number is [phone_number]"],
    ["the meeting was on january fifth twenty twenty five", "the meeting was on [date_of_birth]"],
  ]));

describe("several things in one line", () => {
  it("two numbers, the text between them untouched", () => {
    expect(redact("my cell is four one five five five five oh one nine nine and my work number is 415 555 0123 ok")).toBe(
      "my cell is [phone_number] and my work number is [phone_number] ok",
    );
  });
  it("a card and an email", () => {
    expect(redact("card 4111111111111111 and receipt to ann at example dot org")).toBe("card [card_number] and receipt to [email]");
  });
  it("spans are offsets in the text, sorted", () => {
    const text = "Call 415-555-0199 or mail a@b.io";
    const spans = findSensitiveSpans(text, all);
    expect(spans).toEqual([
      { kind: "phone_number", start: 5, end: 17 },
      { kind: "email", start: 26, end: 32 },
    ]);
    expect(spans.map((s) => text.slice(s.start, s.end))).toEqual(["415-555-0199", "a@b.io"]);
  });
});

describe("which kind a run of digits is", () => {
  it("a 16-digit run is not a phone number when card numbers are off", () => {
    expect(redact("4111 1111 1111 1111", ["phone_number"])).toBe("4111 1111 1111 1111");
  });
  it("a 13-digit run after plus is a phone number", () => {
    expect(redact("plus one four one five five five five oh one nine nine", ["card_number", "phone_number"])).toBe("[phone_number]");
  });
  it("a 9-digit run is only an ssn", () => {
    expect(redact("123 45 6789", ["phone_number", "card_number"])).toBe("123 45 6789");
    expect(redact("123 45 6789", ["ssn"])).toBe("[ssn]");
  });
  it("only the kinds enabled are hidden", () => {
    expect(redact("call 415 555 0199 or write to a@example.com", ["email"])).toBe("call 415 555 0199 or write to [email]");
  });
});

describe("custom rules", () => {
  const setting: RedactSetting = [{ name: "member_id", pattern: "\\bmem[- ]?\\d{6}\\b" }, "phone_number"];
  it("hides every match with the rule's name, case-insensitively", () => {
    expect(redact("My member ID is MEM-123456, and my old one was mem 654321.", setting)).toBe(
      "My member ID is [member_id], and my old one was [member_id].",
    );
  });
  it("works line by line with text outside the ASCII range (offsets in UTF-16 units)", () => {
    const text = "café 😀 MEM123456\nsecond 😀😀 line mem000001";
    const matches = patternMatches("mem\\d+", text);
    expect(matches.map((m) => text.slice(m.start, m.end))).toEqual(["MEM123456", "mem000001"]);
    expect(redactText(text, compileRedaction(setting)).text).toBe("café 😀 [member_id]\nsecond 😀😀 line [member_id]");
  });
  it("more patterns than the compiled-pattern cache holds keep matching (evicted ones are compiled again)", () => {
    const sources = Array.from({ length: 300 }, (_, i) => `code${i}x`);
    for (let round = 0; round < 2; round++) {
      for (const [i, source] of sources.entries()) expect(patternMatches(source, `say CODE${i}X now`)).toEqual([{ start: 4, end: 9 + String(i).length }]);
    }
  });
  it("a catastrophic-backtracking pattern returns", () => {
    const redaction = compileRedaction([{ name: "evil", pattern: "(a+)+$" }]);
    const text = `${"a".repeat(50_000)}b`;
    expect(findSensitiveSpans(text, redaction)).toEqual([]);
    expect(findSensitiveSpans(`xx ${"a".repeat(50_000)}`, redaction)).toEqual([{ kind: "evil", start: 3, end: 50_003 }]);
  });
  it("a pattern that matches everywhere stays bounded and hides rather than shows", () => {
    const redaction = compileRedaction([{ name: "any", pattern: "[a-z]" }]);
    const text = "ab ".repeat(20_000);
    const spans = findSensitiveSpans(text, redaction);
    // Past the search budget the rest of the line counts as matched: nothing after it is shown.
    expect(spans[spans.length - 1]!.end).toBe(text.length);
    expect(redactText(text, redaction).text.replaceAll("[any]", "")).not.toMatch(/[a-z]/);
  });
});

describe("checkRedactSetting", () => {
  const bad: [string, unknown, RegExp][] = [
    ["not an array", "email", /^redact: must be an array/],
    ["an unknown kind", ["email", "passport"], /^redact\[1\]: unknown kind "passport"/],
    ["a kind twice", ["ssn", "ssn"], /^redact\[1\]: "ssn" is listed twice/],
    ["a bad name", ["email", { name: "Member ID", pattern: "x" }], /^redact\[1\]\.name: must match/],
    ["a name that is a kind", [{ name: "email", pattern: "x" }], /^redact\[0\]\.name: "email" is a built-in kind/],
    ["a backreference", ["ssn", "email", { name: "twice", pattern: "(\\w)\\1" }], /^redact\[2\]\.pattern: not a supported regular expression .*backreferences/],
    ["a lookahead", [{ name: "ahead", pattern: "id(?=\\d)" }], /^redact\[0\]\.pattern: not a supported regular expression/],
    ["a pattern that matches nothing", [{ name: "empty", pattern: "x*" }], /^redact\[0\]\.pattern: must not match an empty text/],
    ["a pattern too long", [{ name: "long", pattern: "a".repeat(501) }], /^redact\[0\]\.pattern: must be at most 500 characters/],
    ["too many items", Array.from({ length: 21 }, (_, i) => ({ name: `rule_${i}`, pattern: `r${i}` })), /^redact: at most 20 items/],
    ["an extra field", [{ name: "x", pattern: "x", flags: "g" }], /^redact\[0\]: unknown field "flags"/],
    ["a pattern that is not a string", [{ name: "x", pattern: 5 }], /^redact\[0\]\.pattern: must be a string/],
  ];
  it.each(bad)("refuses %s, naming the item", (_, setting, message) => {
    expect(checkRedactSetting(setting)).toMatch(message);
    expect(() => compileRedaction(setting)).toThrow(message);
  });
  it("accepts every kind and 20 items", () => {
    expect(checkRedactSetting([...REDACTION_KINDS])).toBeNull();
    expect(checkRedactSetting(Array.from({ length: 20 }, (_, i) => ({ name: `rule_${i}`, pattern: `r${i}` })))).toBeNull();
    expect(checkRedactSetting([])).toBeNull();
  });
});

describe("redactJson", () => {
  it("redacts every string of a nested value, keys untouched, returning a copy", () => {
    const value = {
      summary: "Caller gave card 4111 1111 1111 1111 and email ann at example dot com",
      data: { phone: "415 555 0199", callback_number: 4155550199, people: 2, confirmed: true, note: null },
      turns: [{ text: "my ssn is 123-45-6789" }, "fine"],
    };
    const copy = structuredClone(value);
    expect(redactJson(value, all)).toEqual({
      summary: "Caller gave card [card_number] and email [email]",
      data: { phone: "[phone_number]", callback_number: "[phone_number]", people: 2, confirmed: true, note: null },
      turns: [{ text: "my ssn is [ssn]" }, "fine"],
    });
    expect(value).toEqual(copy);
  });
  it("keeps a __proto__ key a key", () => {
    const value = JSON.parse('{"__proto__": {"text": "a@b.io"}}') as Record<string, unknown>;
    const out = redactJson(value, all);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")?.value).toEqual({ text: "[email]" });
  });
});
