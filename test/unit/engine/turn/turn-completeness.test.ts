import { describe, expect, it } from "vitest";
import { endsOpen, transcriptCompleteness } from "../../../../engine/turn/turn-completeness.js";

describe("endsOpen", () => {
  it.each([
    "i would like to come in on",
    "a cleaning and",
    "i need a",
    "my name is",
    "um",
    "tuesday uh",
    "and then i",
    "the best day would be",
    "",
  ])("reads %j as unfinished", (text) => expect(endsOpen(text)).toBe(true));

  it.each(["yes", "tuesday at three", "thank you", "yes it is", "i think so", "yes i can", "i'd like that", "what are your opening hours", "see you then"])(
    "reads %j as able to end a turn",
    (text) => expect(endsOpen(text)).toBe(false),
  );
});

describe("transcriptCompleteness", () => {
  it("needs a punctuating recognizer's full stop or question mark to call a turn complete", () => {
    expect(transcriptCompleteness("What are your opening hours?")).toBe("complete");
    expect(transcriptCompleteness("I'd like to book a cleaning.")).toBe("complete");
    expect(transcriptCompleteness("what are your opening hours")).toBe("unknown");
    expect(transcriptCompleteness("I'd like to come in on")).toBe("incomplete");
    expect(transcriptCompleteness("Um,")).toBe("incomplete");
  });
});
