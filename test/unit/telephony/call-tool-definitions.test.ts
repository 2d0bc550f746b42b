import { describe, expect, it } from "vitest";
import { checkBookingArguments } from "../../../src/telephony/booking-arguments.js";
import { callToolDefinitions } from "../../../src/telephony/call-tool-definitions.js";

describe("the tools a call offers", () => {
  it("offers transfer_call only when the agent may transfer", () => {
    expect(callToolDefinitions({ transferEnabled: false }).map((t) => t.name)).toEqual(["book_appointment", "end_call", "do_not_call"]);
    expect(callToolDefinitions({ transferEnabled: true }).map((t) => t.name)).toEqual(["book_appointment", "transfer_call", "end_call", "do_not_call"]);
  });

  it("refuses booking arguments a model wrote loosely, saying what to fix", () => {
    const booking = { customer_name: "Jane Doe", date: "2025-03-04", time: "15:00", service: "cleaning" };
    expect(checkBookingArguments(booking)).toEqual({ ok: true, arguments: booking });
    expect(checkBookingArguments({ ...booking, time: "9:30" })).toMatchObject({ ok: true, arguments: { time: "09:30" } });
    expect(checkBookingArguments({ ...booking, date: "next Tuesday" })).toEqual({ ok: false, problem: "date must be a real date written YYYY-MM-DD" });
    expect(checkBookingArguments({ ...booking, time: "3pm" })).toEqual({ ok: false, problem: "time must be written HH:MM (24-hour)" });
    expect(checkBookingArguments({ ...booking, customer_name: " " })).toEqual({ ok: false, problem: "customer_name is required" });
  });
});
