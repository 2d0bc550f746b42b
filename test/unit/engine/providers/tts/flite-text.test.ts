import { describe, expect, it } from "vitest";
import { toFliteText } from "../../../../../engine/providers/tts/flite/flite-text.js";

describe("toFliteText", () => {
  it.each<[string, string]>([
    ["Hello, how are you?", "Hello, how are you?"],
    ["I like **cats** 😀.", "I like cats."],
    ["“Quoted” and ‘single’ it’s", `"Quoted" and 'single' it's`],
    ["Wait… what?", "Wait... what?"],
    ["Cats — really — are great.", "Cats, really, are great."],
    ["Open 9–5, Mon - Fri.", "Open 9-5, Mon, Fri."],
    ["A café in Zürich, naïve.", "A cafe in Zurich, naive."],
    ["ﬁne ｔｅｘｔ", "fine text"],
    ["Price: 5 € or 4 £.", "Price: 5 or 4."],
    ["Hello 你好 world.", "Hello world."],
    ["It is 10:30, costs $3.50 & more!", "It is 10:30, costs $3.50 & more!"],
    ["non\u00a0breaking\tspace", "non breaking space"],
  ])("%j -> %j", (input, output) => expect(toFliteText(input)).toBe(output));

  it.each(["", "   ", "...", "😀", "**", "— …"])("has nothing to say for %j", (input) => expect(toFliteText(input)).toBe(""));
});
