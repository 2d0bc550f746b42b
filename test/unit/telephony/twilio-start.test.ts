import { describe, expect, it } from "vitest";
import { checkTwilioStart } from "../../../src/telephony/twilio-start.js";

const ids = { callSid: `CA${"a".repeat(32)}`, streamSid: `MZ${"b".repeat(32)}` };
const start = (customParameters: Record<string, string>) => checkTwilioStart({ ...ids, customParameters });

describe("checkTwilioStart: the stream's numbers in canonical form", () => {
  it("gives To and From as the numbers they are, however they are written", () => {
    expect(start({ To: "+4402071838750", From: "+4407700900123" })).toMatchObject({ to: "+442071838750", from: "+447700900123" });
    expect(start({ To: "+14155550100", From: "+14155550999" })).toMatchObject({ to: "+14155550100", from: "+14155550999" });
  });

  it("takes a caller without a possible number as a caller without a number, and does not refuse the call", () => {
    for (const From of ["client:alice", "anonymous", "+4477009", ""]) expect(start({ To: "+14155550100", From }).from).toBeNull();
  });

  it("keeps a To that is E.164 but no possible number as it is (a number stored before numbers were checked), refuses one that is not E.164", () => {
    expect(start({ To: "+4477009" }).to).toBe("+4477009");
    expect(() => start({ To: "support" })).toThrow(/E.164/);
  });
});
