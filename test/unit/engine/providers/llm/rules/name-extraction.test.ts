import { describe, expect, it } from "vitest";
import { findName } from "../../../../../../engine/providers/llm/rules/name-extraction.js";
import { toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";

const name = (text: string, bare = false, notNames: string[] = []) => findName(toUtterance(text), { bare, notNames: new Set(notNames) });

describe("findName", () => {
  it.each([
    ["my name is john smith", "John Smith"],
    ["yeah hi my name is john smith and i'd like to book", "John Smith"],
    ["this is jane", "Jane"],
    ["hi this is jane calling about an appointment", "Jane"],
    ["it's bob", "Bob"],
    ["its bob", "Bob"],
    ["i'm mary ann lee", "Mary Ann Lee"],
    ["my name's peter o'brien", "Peter O'Brien"],
    ["you can call me sam", "Sam"],
    ["put it under the name of garcia", "Garcia"],
    ["Hi. My name is Anna Berg, and I'd like a cleaning.", "Anna Berg"],
  ])("%s -> %s", (text, expected) => expect(name(text)).toBe(expected));

  it.each([
    "this is for a cleaning",
    "it's tuesday",
    "i am calling to book",
    "i am happy to wait",
    "this is great",
    "it is three pm",
    "i am not sure",
    "i would like to book an appointment",
    "john smith",
  ])("finds no name in %s", (text) => expect(name(text)).toBeNull());

  it("takes a bare answer as the name when the name was asked for", () => {
    expect(name("john smith", true)).toBe("John Smith");
    expect(name("uh sure it's jane please", true)).toBe("Jane");
    expect(name("tomorrow at three", true)).toBeNull();
    expect(name("i do not know what you mean by that", true)).toBeNull();
  });

  it("never takes the agent's service words for a name", () => {
    expect(name("it's whitening", false, ["whitening"])).toBeNull();
    expect(name("whitening", true, ["whitening"])).toBeNull();
  });
});
