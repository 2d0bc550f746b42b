import { describe, expect, it } from "vitest";
import { offerFreeTimes } from "../../../../../../engine/providers/llm/rules/free-times.js";

const today = { year: 2025, month: 3, day: 1 };
const asked = { date: { year: 2025, month: 3, day: 4 }, time: { hour: 15, minute: 0 } };
const refused = (alternatives: unknown) => ({ ok: false as const, error: "taken", data: { alternatives } });

describe("offering the free times of a refused booking or move", () => {
  it("names a day once for its times, and each day for times on different days", () => {
    expect(offerFreeTimes(asked, refused([{ date: "2025-03-04", time: "15:30" }, { date: "2025-03-04", time: "16:00" }]), today)).toEqual([
      "I'm sorry, Tuesday, March 4 at 3:00 PM isn't available.",
      "The nearest free times are Tuesday, March 4 at 3:30 PM or 4:00 PM.",
      "Which day and time would suit you?",
    ]);
    expect(offerFreeTimes(asked, refused([{ date: "2025-03-04", time: "16:30" }, { date: "2025-03-05", time: "09:00" }]), today)![1]).toBe(
      "The nearest free times are Tuesday, March 4 at 4:30 PM or Wednesday, March 5 at 9:00 AM.",
    );
  });

  it("offers nothing when the refusal has no readable time", () => {
    expect(offerFreeTimes(asked, refused([{ date: "next week", time: "3pm" }]), today)).toBeNull();
    expect(offerFreeTimes(asked, { ok: false, error: "down" }, today)).toBeNull();
  });
});
