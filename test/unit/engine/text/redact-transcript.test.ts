import { describe, expect, it } from "vitest";
import { compileRedaction } from "../../../../engine/text/redaction/redaction-rules.js";
import { redactTranscript } from "../../../../engine/text/redaction/redact-transcript.js";

const cards = compileRedaction(["card_number"]);

describe("redactTranscript", () => {
  it("replaces what is found and gives each such segment's stretch: from half a second before it to the next segment", () => {
    const { transcript, stretches } = redactTranscript(
      [
        { role: "agent", content: "Your card number, please.", timestamp: 0.2 },
        { role: "user", content: "it is four one one one one one one one one one one one one one one one", timestamp: 2.4 },
        { role: "agent", content: "Thank you.", timestamp: 9.1 },
      ],
      cards,
    );
    expect(transcript.map((s) => s.content)).toEqual(["Your card number, please.", "it is [card_number]", "Thank you."]);
    expect(stretches).toEqual([{ role: "user", fromSeconds: 1.9, toSeconds: 9.1 }]);
  });

  it("hides at most 30 s of the last segment, and an agent's segment on its side", () => {
    const { stretches } = redactTranscript([{ role: "agent", content: "So that is 4111 1111 1111 1111.", timestamp: 0.3 }], cards);
    expect(stretches).toEqual([{ role: "agent", fromSeconds: 0, toSeconds: 30.3 }]);
  });

  it("leaves a transcript without anything to hide as it was, and copies it", () => {
    const input = [{ role: "user" as const, content: "tuesday at three", timestamp: 1 }];
    const { transcript, stretches } = redactTranscript(input, cards);
    expect(transcript).toEqual(input);
    expect(transcript[0]).not.toBe(input[0]);
    expect(stretches).toEqual([]);
  });
});
