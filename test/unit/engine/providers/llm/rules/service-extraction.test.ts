import { describe, expect, it } from "vitest";
import { findService, type Service } from "../../../../../../engine/providers/llm/rules/service-extraction.js";
import { toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";

const LIST: Service[] = [
  { name: "Teeth whitening", durationMinutes: 60 },
  { name: "Cleaning", durationMinutes: null },
  { name: "Checkup", durationMinutes: 30 },
];

const service = (text: string, options: Service[] = [], bare = false) => findService(toUtterance(text), options, bare)?.name ?? null;

describe("findService", () => {
  describe("without a list: the caller's phrase after a or an", () => {
    it.each([
      ["for a cleaning", "cleaning"],
      ["i'd like a cleaning tomorrow at three pm", "cleaning"],
      ["i need a haircut", "haircut"],
      ["book an appointment for a deep cleaning please", "deep cleaning"],
      ["it's for a check up", "check up"],
      ["i would like an eye exam on friday", "eye exam"],
      ["can i book an appointment", null],
      ["i have a quick question", null],
      ["can i talk to a real person", null],
      ["i need a few minutes", null],
    ])("%s -> %s", (text, expected) => expect(service(text)).toBe(expected));

    it("takes the whole answer when the service was asked for", () => {
      expect(service("cleaning", [], true)).toBe("cleaning");
      expect(service("um just a haircut please", [], true)).toBe("haircut");
      expect(service("teeth whitening please", [], true)).toBe("teeth whitening");
      expect(service("cleaning", [], false)).toBeNull();
      expect(service("tomorrow", [], true)).toBeNull();
    });
  });

  describe("with the agent's list", () => {
    it.each([
      ["i'd like a cleaning", "Cleaning"],
      ["cleanings", "Cleaning"],
      ["the whitening please", "Teeth whitening"],
      ["whitning", "Teeth whitening"],
      ["teeth whitening", "Teeth whitening"],
      ["a check up", "Checkup"],
      ["a haircut", null],
      ["is that clear", null],
    ])("%s -> %s", (text, expected) => expect(service(text, LIST)).toBe(expected));

    it("keeps the listed duration", () => {
      expect(findService(toUtterance("whitening"), LIST, true)).toEqual({ name: "Teeth whitening", durationMinutes: 60 });
    });
  });
});
