import { describe, expect, it } from "vitest";
import { callingCode } from "../../../src/core/calling-code.js";

describe("callingCode", () => {
  it.each([
    ["+14155550100", "+1"],
    ["+74951234567", "+7"],
    ["+442071838750", "+44"],
    ["+33142685300", "+33"],
    ["+971501234567", "+971"],
    ["+8819876543210", "+881"],
    ["+35312345678", "+353"],
  ])("%s -> %s", (number, code) => {
    expect(callingCode(number)).toBe(code);
  });
});
