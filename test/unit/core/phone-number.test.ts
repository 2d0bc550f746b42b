import { describe, expect, it } from "vitest";
import { callerNumber, canonicalPhoneNumber, dialledNumber, normalizePhoneNumber, readPhoneNumber } from "../../../src/core/phone-number.js";
import { SIMULATOR_MAGIC_NUMBERS } from "../../../src/telephony/simulator/simulator-carrier.js";
import { seededRandom } from "../../helpers/seeded-random.js";

describe("normalizePhoneNumber", () => {
  it.each([
    ["+4407700900123", "+447700900123"], // the UK trunk 0 after the country code
    ["+447700900123", "+447700900123"],
    ["+4402071838750", "+442071838750"],
    ["+4902012345678", "+492012345678"],
    ["+610412345678", "+61412345678"],
    ["+114155550123", "+14155550123"], // NANP's trunk 1
    ["+14155550123", "+14155550123"],
    ["+390612345678", "+390612345678"], // Italy keeps its 0: it is part of the number
  ])("writes %s as %s", (given, canonical) => {
    expect(normalizePhoneNumber(given)).toBe(canonical);
  });

  it("accepts possible numbers that are not assigned: 555-01XX and the simulator's numbers", () => {
    for (const number of ["+15555550123", "+15005550001", "+15005551234", "+15005555999", ...Object.keys(SIMULATOR_MAGIC_NUMBERS)]) {
      expect(normalizePhoneNumber(number)).toBe(number);
    }
  });

  it.each([
    ["+4477009", "+4477009 is not a possible number for GB (too short)"],
    ["+44077009001234", "+44077009001234 is not a possible number for GB (too long)"],
    ["+1415555012", "+1415555012 is not a possible number for US (too short)"],
    ["+1234567", "+1234567 is not a possible number for US (too short)"],
    ["+999123456789", "+999123456789 is not a possible number: no country has its calling code"],
    ["4155550123", "must be an E.164 phone number like +14155550123"],
    ["+1 415 555 0123", "must be an E.164 phone number like +14155550123"],
    ["+1-800-FLOWERS", "must be an E.164 phone number like +14155550123"],
    ["+14155550123;ext=1", "must be an E.164 phone number like +14155550123"],
    ["", "must be an E.164 phone number like +14155550123"],
  ])("refuses %j: %s", (given, problem) => {
    expect(readPhoneNumber(given)).toEqual({ problem });
    expect(normalizePhoneNumber(given)).toBeUndefined();
  });

  it("gives a canonical number back unchanged (writing it again changes nothing)", () => {
    const random = seededRandom(18);
    const codes = ["1", "7", "33", "39", "44", "49", "61", "81", "353", "971"];
    let checked = 0;
    for (let i = 0; i < 5000; i++) {
      const code = codes[Math.floor(random() * codes.length)]!;
      const rest = Array.from({ length: 6 + Math.floor(random() * 7) }, () => Math.floor(random() * 10)).join("");
      const once = normalizePhoneNumber(`+${code}${random() < 0.3 ? "0" : ""}${rest}`);
      if (once === undefined) continue;
      checked++;
      expect(normalizePhoneNumber(once)).toBe(once);
    }
    expect(checked).toBeGreaterThan(500);
  });
});

describe("numbers from elsewhere than the API", () => {
  it("canonicalPhoneNumber keeps a number it cannot read as it is (an old stored row)", () => {
    expect(canonicalPhoneNumber("+4407700900123")).toBe("+447700900123");
    expect(canonicalPhoneNumber("+4477009")).toBe("+4477009");
  });

  it("callerNumber: a caller ID with or without its plus, null for names and numbers that cannot be", () => {
    expect(callerNumber("+4407700900123")).toBe("+447700900123");
    expect(callerNumber("14155550100")).toBe("+14155550100");
    for (const garbage of ["alice", "anonymous", "", "+4477009", "client:alice"]) expect(callerNumber(garbage)).toBeNull();
  });

  it("dialledNumber: canonical for routing, an impossible E.164 number kept, anything else null", () => {
    expect(dialledNumber("+4402071838750")).toBe("+442071838750");
    expect(dialledNumber("442071838750")).toBe("+442071838750");
    expect(dialledNumber("+4477009")).toBe("+4477009");
    expect(dialledNumber("support")).toBeNull();
  });
});
