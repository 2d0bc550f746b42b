import { describe, expect, it } from "vitest";
import { toSpeechText } from "../../../../engine/text/speech-text.js";

describe("toSpeechText", () => {
  it.each<[string, string]>([
    ["I like **cats**.", "I like cats."],
    ["I like *cats* and __dogs__.", "I like cats and dogs."],
    ["*Really?*", "Really?"],
    ["Use `npm start` now.", "Use npm start now."],
    ["~~old~~ new", "old new"],
    ["See [our site](https://example.com) today.", "See our site today."],
    ["# Opening hours", "Opening hours"],
    ["## Step two:", "Step two:"],
    ["- Monday to Friday", "Monday to Friday"],
    ["* nine to five", "nine to five"],
    ["> quoted words", "quoted words"],
    ["Great 😀!", "Great!"],
    ["Thanks 👍🏽 see you", "Thanks see you"],
    ["Family 👨‍👩‍👧 time ❤️.", "Family time."],
    ["Go 🇺🇸 team", "Go team"],
    ["Line one\nline two\n\nthree", "Line one line two three"],
    ["Press * to repeat, or # for more.", "Press * to repeat, or # for more."],
    ["Call my_number or 5*3.", "Call my_number or 5*3."],
    ["It is 10:30, costs $3.50, and... well!", "It is 10:30, costs $3.50, and... well!"],
    ["Café crème, naïve résumé.", "Café crème, naïve résumé."],
    ["**  **", ""],
  ])("%j -> %j", (input, output) => expect(toSpeechText(input)).toBe(output));
});
