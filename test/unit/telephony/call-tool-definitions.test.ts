import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { AgentRecord } from "../../../src/db/repositories/agents.js";
import type { CallRecord } from "../../../src/db/repositories/calls.js";
import type { Services } from "../../../src/services/container.js";
import { checkBookingArguments } from "../../../src/telephony/booking-arguments.js";
import { callToolDefinitions } from "../../../src/telephony/call-tool-definitions.js";
import { CallTools } from "../../../src/telephony/call-tools.js";

describe("the tools a call offers", () => {
  it("offers transfer_call only when the agent may transfer", () => {
    const noKeys = { canSendKeys: false };
    expect(callToolDefinitions({ transferEnabled: false }, noKeys).map((t) => t.name)).toEqual(["book_appointment", "end_call", "do_not_call"]);
    expect(callToolDefinitions({ transferEnabled: true }, noKeys).map((t) => t.name)).toEqual(["book_appointment", "transfer_call", "end_call", "do_not_call"]);
  });

  it("offers send_dtmf only on calls that can press keys, and presses nothing but keys", async () => {
    expect(callToolDefinitions({ transferEnabled: false }, { canSendKeys: true }).map((t) => t.name)).toEqual(["book_appointment", "end_call", "do_not_call", "send_dtmf"]);
    const pressed: string[] = [];
    const tools = (sendKeys: ((digits: string) => Promise<void>) | null) =>
      new CallTools({} as Services, {} as CallRecord, { tools: [], knowledge_base_ids: [] } as unknown as AgentRecord, { transferEnabled: false }, pino({ level: "silent" }), sendKeys);
    const line = tools(async (digits) => void pressed.push(digits));
    expect(await line.execute("send_dtmf", { digits: "1" })).toEqual({ ok: true, data: { status: "sent", digits: "1" } });
    expect(await line.execute("send_dtmf", { digits: "*123#" })).toMatchObject({ ok: true });
    for (const digits of ["1; 2", "", "1".repeat(33), 5, "A"]) {
      expect(await line.execute("send_dtmf", { digits })).toEqual({ ok: false, error: "digits must be 1 to 32 of 0-9, * and #" });
    }
    expect(pressed).toEqual(["1", "*123#"]);
    const cannot = tools(null);
    expect(cannot.definitions.map((t) => t.name)).not.toContain("send_dtmf");
    expect(await cannot.execute("send_dtmf", { digits: "1" })).toEqual({ ok: false, error: "keys cannot be pressed on this call" });
    const broken = tools(async () => {
      throw new Error("the far end did not negotiate telephone-event");
    });
    expect(await broken.execute("send_dtmf", { digits: "1" })).toEqual({ ok: false, error: "send_dtmf failed on our side; nothing was done" });
  });

  it("refuses booking arguments a model wrote loosely, saying what to fix", () => {
    const booking = { customer_name: "Jane Doe", date: "2025-03-04", time: "15:00", service: "cleaning" };
    expect(checkBookingArguments(booking)).toEqual({ ok: true, arguments: booking });
    expect(checkBookingArguments({ ...booking, time: "9:30" })).toMatchObject({ ok: true, arguments: { time: "09:30" } });
    expect(checkBookingArguments({ ...booking, date: "next Tuesday" })).toEqual({ ok: false, problem: "date must be a real date written YYYY-MM-DD" });
    expect(checkBookingArguments({ ...booking, time: "3pm" })).toEqual({ ok: false, problem: "time must be written HH:MM (24-hour)" });
    expect(checkBookingArguments({ ...booking, customer_name: " " })).toEqual({ ok: false, problem: "customer_name is required" });
  });

  it("offers the agent's own HTTP tools after the built-in ones, by name, description and parameters only", () => {
    const orderStatus = {
      name: "order_status",
      description: "Looks up an order.",
      parameters: { type: "object", properties: { order_id: { type: "string" } } },
      url: "https://orders.example.com/x",
      method: "POST",
      timeout_ms: 5000,
      headers: { Authorization: "Bearer {{secrets.TOKEN}}" },
      signing_secret: "SIGNING",
    };
    const tools = new CallTools({} as Services, {} as CallRecord, { tools: [orderStatus], knowledge_base_ids: [] } as unknown as AgentRecord, { transferEnabled: false }, pino({ level: "silent" }));
    expect(tools.definitions.map((t) => t.name)).toEqual(["book_appointment", "end_call", "do_not_call", "order_status"]);
    // What the model is told: never the URL or the headers.
    expect(tools.definitions.at(-1)).toEqual({ name: "order_status", description: "Looks up an order.", parameters: orderStatus.parameters });
  });

  it("offers the knowledge search only to an agent with knowledge bases (the dialogue runs it itself)", () => {
    const tools = (ids: string[]) => new CallTools({} as Services, {} as CallRecord, { tools: [], knowledge_base_ids: ids } as unknown as AgentRecord, { transferEnabled: false }, pino({ level: "silent" }));
    expect(tools([]).definitions.map((t) => t.name)).not.toContain("search_knowledge");
    expect(tools(["kb_1"]).definitions.map((t) => t.name)).toContain("search_knowledge");
  });

  it("offers handoff to an agent with handoffs, readies only those agents, and switches to the new agent's tools once the session reports the hand-off", async () => {
    const front = { id: "agent_front", name: "Front", tools: [], knowledge_base_ids: [], handoffs: [{ agent_id: "agent_billing", description: "billing questions" }] } as unknown as AgentRecord;
    const refund = { name: "refund", description: "Refunds.", parameters: { type: "object", properties: {} } };
    const billing = { id: "agent_billing", name: "Bill", status: "active", tools: [refund], knowledge_base_ids: [], handoffs: [] } as unknown as AgentRecord;
    const stored = new Map([[billing.id, billing]]);
    const services = { agents: { get: async (_account: string, id: string) => stored.get(id) ?? Promise.reject(new Error("agent_not_found")) } } as unknown as Services;
    const settingsOf = async (agent: AgentRecord) => ({ id: agent.id, name: agent.name, transferEnabled: false }) as never;
    const tools = new CallTools(services, { account_id: "acct_1", agent_id: "agent_front" } as CallRecord, front, { transferEnabled: false }, pino({ level: "silent" }), null, null, settingsOf);
    const handoff = tools.definitions.find((t) => t.name === "handoff");
    expect(handoff?.description).toContain("- agent_billing: billing questions");
    expect(handoff?.parameters).toMatchObject({ properties: { agent_id: { enum: ["agent_billing"] } }, required: ["agent_id"] });

    expect(await tools.execute("handoff", { agent_id: "agent_other" })).toEqual({ ok: false, error: "agent_id must be one of agent_billing" });
    const result = await tools.execute("handoff", { agent_id: "agent_billing" });
    expect(result).toMatchObject({ ok: true, data: { status: "handing_off", agent_name: "Bill" }, then: { handoff: { agent: { id: "agent_billing" } } } });
    const offered = result.ok && typeof result.then === "object" && "handoff" in result.then ? result.then.handoff.tools.map((t) => t.name) : [];
    expect(offered).toEqual(["book_appointment", "end_call", "do_not_call", "refund"]);
    // Readied, not yet carried out: still the front desk's tools.
    expect(tools.definitions.map((t) => t.name)).toContain("handoff");
    tools.handedOff("agent_billing");
    expect(tools.definitions.map((t) => t.name)).toEqual(offered);

    // A target made inactive, or deleted, since the agent was saved is refused truthfully.
    stored.set(billing.id, { ...billing, status: "inactive" } as AgentRecord);
    const paused = new CallTools(services, { account_id: "acct_1", agent_id: "agent_front" } as CallRecord, front, { transferEnabled: false }, pino({ level: "silent" }), null, null, settingsOf);
    expect(await paused.execute("handoff", { agent_id: "agent_billing" })).toEqual({ ok: false, error: "that agent is no longer available; help the caller yourself" });
    stored.delete(billing.id);
    const again = new CallTools(services, { account_id: "acct_1", agent_id: "agent_front" } as CallRecord, front, { transferEnabled: false }, pino({ level: "silent" }), null, null, settingsOf);
    expect(await again.execute("handoff", { agent_id: "agent_billing" })).toEqual({ ok: false, error: "that agent is no longer available; help the caller yourself" });
  });
});
