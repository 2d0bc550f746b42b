import type { Logger } from "pino";
import type { AgentSettings, ToolDefinition, ToolExecutor, ToolResult } from "../../engine/index.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { CallRecord } from "../db/repositories/calls.js";
import { bookingHoursOf } from "../services/booking-calendar.js";
import type { Services } from "../services/container.js";
import { checkBookingArguments } from "./booking-arguments.js";
import { callToolDefinitions, MAX_DTMF_DIGITS, type CallToolName } from "./call-tool-definitions.js";

/**
 * One call's tools, run for the engine's dialogue: each does what it says and answers with
 * what really happened, so the agent never tells the caller "booked" for a booking that was
 * not stored. A tool's own failure (a database error) is reported as such, not thrown.
 */
export class CallTools implements ToolExecutor {
  readonly definitions: readonly ToolDefinition[];

  constructor(
    private readonly services: Services,
    private readonly call: CallRecord,
    private readonly agent: AgentRecord,
    private readonly settings: Pick<AgentSettings, "transferEnabled">,
    private readonly log: Logger,
    /** Presses keys on the call's line; null when its protocol cannot (only SIP can). */
    private readonly sendKeys: ((digits: string) => Promise<void>) | null = null,
  ) {
    this.definitions = callToolDefinitions(settings, { canSendKeys: sendKeys !== null });
  }

  async execute(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    try {
      switch (name as CallToolName) {
        case "book_appointment":
          return await this.book(args);
        case "transfer_call":
          // Only offered when transfer is enabled; a model may still invent the call.
          if (!this.settings.transferEnabled) return { ok: false, error: "transfer is not available on this line" };
          return { ok: true, data: { status: "transferring" }, then: "transfer" };
        case "end_call": {
          const reason = typeof args.reason === "string" && args.reason.trim() !== "" ? args.reason.trim() : "agent_ended";
          return { ok: true, data: { status: "ending" }, then: { endCall: reason } };
        }
        case "do_not_call":
          await this.services.doNotCall.calleeAsked(this.call);
          return { ok: true, data: { status: "listed" } };
        case "send_dtmf":
          return await this.pressKeys(args);
        default:
          return { ok: false, error: `there is no tool named ${name}` };
      }
    } catch (err) {
      this.log.error({ err, tool: name }, "call tool failed");
      return { ok: false, error: `${name} failed on our side; nothing was done` };
    }
  }

  /** Presses the keys on the line (RFC 4733 on SIP); resolves once they are sent. */
  private async pressKeys(args: Record<string, unknown>): Promise<ToolResult> {
    if (!this.sendKeys) return { ok: false, error: "keys cannot be pressed on this call" };
    const digits = args.digits;
    if (typeof digits !== "string" || !new RegExp(`^[0-9*#]{1,${MAX_DTMF_DIGITS}}$`).test(digits)) {
      return { ok: false, error: `digits must be 1 to ${MAX_DTMF_DIGITS} of 0-9, * and #` };
    }
    await this.sendKeys(digits);
    return { ok: true, data: { status: "sent", digits } };
  }

  /** Books in the agent's calendar, or refuses with the nearest free times. */
  private async book(args: Record<string, unknown>): Promise<ToolResult> {
    const check = checkBookingArguments(args);
    if (!check.ok) return { ok: false, error: check.problem };
    const hours = bookingHoursOf(this.agent.metadata);
    if ("problem" in hours) return { ok: false, error: `the agent's booking_hours are misconfigured (${hours.problem}); nothing was booked` };
    const booking = check.arguments;
    const outcome = await this.services.appointments.book(
      {
        account_id: this.call.account_id,
        call_id: this.call.id,
        agent_id: this.call.agent_id,
        customer_name: booking.customer_name,
        customer_phone: this.call.direction === "outbound" ? this.call.phone_number : this.call.from_number,
        date: booking.date,
        time: booking.time,
        service: booking.service,
        ...(booking.duration_minutes !== undefined ? { duration_minutes: booking.duration_minutes } : {}),
      },
      hours.hours,
    );
    if ("booked" in outcome) {
      const { id, date, time } = outcome.booked;
      return { ok: true, data: { status: "booked", appointment_id: id, date, time } };
    }
    const why = outcome.refused === "slot_taken" ? "that time is already taken" : "that time is outside booking hours";
    return { ok: false, error: `${why}; offer one of the alternatives`, data: { reason: outcome.refused, alternatives: outcome.alternatives } };
  }
}
