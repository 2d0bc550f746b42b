import type { Logger } from "pino";
import { KNOWLEDGE_SEARCH_TOOL, type AgentSettings, type KnowledgePassage, type ToolDefinition, type ToolExecutor, type ToolResult } from "../../engine/index.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { AppointmentRecord } from "../db/repositories/appointments.js";
import type { CallRecord } from "../db/repositories/calls.js";
import { bookingHoursOf } from "../services/booking-calendar.js";
import type { BookingOutcome } from "../services/appointments.js";
import type { Services } from "../services/container.js";
import { checkBookingArguments, checkDateTime } from "./booking-arguments.js";
import { callHttpTool } from "./http-tool.js";
import { callToolDefinitions, handoffTool, MAX_DTMF_DIGITS, type CallToolName } from "./call-tool-definitions.js";
import { spokenName, spokenService } from "./spoken-appointment.js";

/** Passages a knowledge search gives the dialogue: enough to answer from, few enough for a prompt. */
const KNOWLEDGE_PASSAGES = 3;
/** A caller's turn searched for: longer ones are cut (a monologue is not one question). */
const MAX_QUESTION_CHARS = 500;

const KNOWLEDGE_SEARCH: ToolDefinition = {
  name: KNOWLEDGE_SEARCH_TOOL,
  description: "Finds the passages of the business's documents that match the caller's words (run by the dialogue itself each turn).",
  parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
};

/**
 * One call's tools, run for the engine's dialogue: each does what it says and answers with
 * what really happened, so the agent never tells the caller "booked" for a booking that was
 * not stored. A tool's own failure (a database error) is reported as such, not thrown.
 */
export class CallTools implements ToolExecutor {
  /** The tools of the agent on the line. */
  definitions: readonly ToolDefinition[];
  /** Agents a `handoff` has made ready, by id, until the session reports it carried it out (see `handedOff`). */
  private readonly ready = new Map<string, { agent: AgentRecord; settings: AgentSettings }>();

  constructor(
    private readonly services: Services,
    private readonly call: CallRecord,
    /** The agent on the line: the call's own until a hand-off (see `handedOff`). */
    private agent: AgentRecord,
    private settings: Pick<AgentSettings, "transferEnabled">,
    private readonly log: Logger,
    /** Presses keys on the call's line; null when its protocol cannot (only SIP can). */
    private readonly sendKeys: ((digits: string) => Promise<void>) | null = null,
    /** On a reminder call: its appointment, the only one its tools act on. */
    private readonly appointment: AppointmentRecord | null = null,
    /** The engine's settings for an agent the call is handed off to; absent: no hand-offs. */
    private readonly settingsOf?: (agent: AgentRecord) => Promise<AgentSettings>,
    /**
     * An agent test run's call: bookings are checked against the calendar but not stored, and a
     * do-not-call request is not listed; nothing a simulated caller says changes the account's
     * records. HTTP tools are called for real (the integrator's API is what is being tested).
     */
    private readonly dryRun = false,
  ) {
    this.definitions = this.definitionsFor(agent, settings);
  }

  /** The agent on the line: the call's own, or the one it was last handed off to. */
  get agentOnLine(): AgentRecord {
    return this.agent;
  }

  /**
   * The session passed the caller to `agentId` (its `handoff` event): from now on the tools are
   * that agent's. A hand-off the session did not carry out (the caller cut the reply short)
   * changes nothing.
   */
  handedOff(agentId: string): void {
    const next = this.ready.get(agentId);
    if (!next) return;
    this.ready.clear();
    this.agent = next.agent;
    this.settings = next.settings;
    this.definitions = this.definitionsFor(next.agent, next.settings);
  }

  /** The tools offered to `agent` on this call. */
  private definitionsFor(agent: AgentRecord, settings: Pick<AgentSettings, "transferEnabled">): ToolDefinition[] {
    // The agent's own HTTP tools after the built-in ones (their names never collide: see the agent schema).
    const custom = agent.tools.map(({ name, description, parameters }) => ({ name, description, parameters }));
    const knowledge = agent.knowledge_base_ids.length > 0 ? [KNOWLEDGE_SEARCH] : [];
    const handoff = this.settingsOf && agent.handoffs.length > 0 ? [handoffTool(agent.handoffs)] : [];
    // A reminder call's tools are its first agent's: they act on the appointment it called about.
    const reminder = this.appointment !== null && agent.id === this.call.agent_id;
    return [...callToolDefinitions(settings, { canSendKeys: this.sendKeys !== null, reminder }), ...handoff, ...knowledge, ...custom];
  }

  async execute(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    try {
      if (name === KNOWLEDGE_SEARCH_TOOL) return await this.searchKnowledge(args);
      const tool = name as CallToolName;
      switch (tool) {
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
          if (!this.dryRun) await this.services.doNotCall.calleeAsked(this.call);
          return { ok: true, data: { status: "listed" } };
        case "send_dtmf":
          return await this.pressKeys(args);
        case "handoff":
          return await this.prepareHandoff(args);
        case "confirm_appointment":
        case "cancel_appointment":
        case "reschedule_appointment":
          return await this.changeAppointment(tool, args);
        default:
          return await this.callCustom(name, args);
      }
    } catch (err) {
      this.log.error({ err, tool: name }, "call tool failed");
      return { ok: false, error: `${name} failed on our side; nothing was done` };
    }
  }

  /**
   * Makes the agent `args.agent_id` (one of this agent's `handoffs`, still in the account)
   * ready to take the call over; the session carries the hand-off out once the reply is heard.
   */
  private async prepareHandoff(args: Record<string, unknown>): Promise<ToolResult> {
    const id = args.agent_id;
    const offered = this.agent.handoffs.map((h) => h.agent_id);
    if (!this.settingsOf || typeof id !== "string" || !offered.includes(id)) {
      return { ok: false, error: offered.length > 0 && this.settingsOf ? `agent_id must be one of ${offered.join(", ")}` : "this agent passes callers to no other agent" };
    }
    const agent = await this.services.agents.get(this.call.account_id, id).catch(() => null);
    if (!agent || agent.status !== "active") return { ok: false, error: "that agent is no longer available; help the caller yourself" };
    const settings = await this.settingsOf(agent);
    this.ready.set(id, { agent, settings });
    return { ok: true, data: { status: "handing_off", agent_name: agent.name }, then: { handoff: { agent: settings, tools: this.definitionsFor(agent, settings) } } };
  }

  /** The passages of the agent's knowledge bases that best match the caller's words (see KNOWLEDGE_SEARCH_TOOL). */
  private async searchKnowledge(args: Record<string, unknown>): Promise<ToolResult> {
    if (this.agent.knowledge_base_ids.length === 0) return { ok: false, error: "this agent has no knowledge base" };
    const question = typeof args.question === "string" ? args.question.slice(0, MAX_QUESTION_CHARS) : "";
    const hits = await this.services.knowledgeBases.search(this.call.account_id, this.agent.knowledge_base_ids, question, KNOWLEDGE_PASSAGES);
    const passages: KnowledgePassage[] = hits.map((hit) => ({ passage_id: hit.passage_id, document_name: hit.document_name, text: hit.text, score: hit.score }));
    return { ok: true, data: { passages } };
  }

  /** One of the agent's HTTP tools (see http-tool.ts): the integrator's answer, or what went wrong. */
  private async callCustom(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const tool = this.agent.tools.find((t) => t.name === name);
    if (!tool) return { ok: false, error: `there is no tool named ${name}` };
    const { sender, checkTarget } = this.services.toolRequests;
    return callHttpTool(tool, args, { callId: this.call.id, agentId: this.agent.id }, {
      sender,
      checkTarget,
      secrets: (names) => this.services.secrets.resolve(this.call.account_id, names),
      now: Date.now,
    });
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

  /**
   * Confirms, cancels or moves the reminder call's appointment, as it stands now (the customer
   * may have changed it since the call began); a move is checked against the agent's calendar
   * like a booking.
   */
  private async changeAppointment(name: "confirm_appointment" | "cancel_appointment" | "reschedule_appointment", args: Record<string, unknown>): Promise<ToolResult> {
    if (!this.appointment) return { ok: false, error: "this call is about no appointment" };
    const { appointments } = this.services;
    const current = await appointments.get(this.call.account_id, this.appointment.id);
    if (current.status === "cancelled") return { ok: false, error: "the appointment was cancelled already" };
    // What the dialogue may say back: the API may have written the name and service (see spoken-appointment.ts).
    const done = (status: string, a: AppointmentRecord): ToolResult => ({
      ok: true,
      data: { status, appointment_id: a.id, date: a.date, time: a.time, service: spokenService(a.service, this.agent.metadata), customer_name: spokenName(a.customer_name), customer_email: a.customer_email },
    });
    if (name === "confirm_appointment") {
      const confirmed = await appointments.confirmed(current);
      return confirmed ? done("confirmed", confirmed) : { ok: false, error: "the appointment was cancelled meanwhile" };
    }
    if (name === "cancel_appointment") {
      const cancelled = await appointments.cancelled(current);
      return cancelled ? done("cancelled", cancelled) : { ok: false, error: "the appointment was cancelled already" };
    }
    const when = checkDateTime(args);
    if (!when.ok) return { ok: false, error: when.problem };
    const hours = bookingHoursOf(this.agent.metadata);
    if ("problem" in hours) return { ok: false, error: `the agent's booking_hours are misconfigured (${hours.problem}); nothing was changed` };
    const outcome = await appointments.reschedule(current, { date: when.date, time: when.time }, hours.hours);
    if ("booked" in outcome) return done("rescheduled", outcome.booked);
    if (outcome.refused === "cancelled") return { ok: false, error: "the appointment was cancelled meanwhile" };
    return calendarRefusal(outcome);
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
        // The agent on the line: after a hand-off, its calendar.
        agent_id: this.agent.id,
        customer_name: booking.customer_name,
        customer_phone: this.call.direction === "outbound" ? this.call.phone_number : this.call.from_number,
        date: booking.date,
        time: booking.time,
        service: booking.service,
        ...(booking.duration_minutes !== undefined ? { duration_minutes: booking.duration_minutes } : {}),
      },
      hours.hours,
      { dryRun: this.dryRun },
    );
    if ("booked" in outcome) {
      const { id, date, time } = outcome.booked;
      return { ok: true, data: { status: "booked", appointment_id: id, date, time } };
    }
    return calendarRefusal(outcome);
  }
}

/** A booking or move refused: a time the agent's calendar refused, with the free times the dialogue offers instead, or a call that has booked its most. */
function calendarRefusal(outcome: Extract<BookingOutcome, { refused: string }>): ToolResult {
  if (outcome.refused === "booking_limit_reached") return { ok: false, error: "this call has booked as many appointments as one call may; nothing more was booked", data: { reason: outcome.refused } };
  const why = outcome.refused === "slot_taken" ? "that time is already taken" : "that time is outside booking hours";
  return { ok: false, error: `${why}; offer one of the alternatives`, data: { reason: outcome.refused, alternatives: outcome.alternatives } };
}
