import { describe, expect, it } from "vitest";
import { buildIntentIndex, matchIntent, slotAnswer } from "../../../../../../engine/providers/llm/rules/intent-requests.js";
import { createRulesDialogueProvider } from "../../../../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import { toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";
import type { ToolResult } from "../../../../../../engine/tools.js";
import type { DialogueIntent } from "../../../../../../engine/types.js";
import { recordingTools, say, spoken, testAgent } from "../../../../../helpers/dialogue.js";

// Issue 31: a rules agent answers a request with one of its tools, asking for the arguments.

const ORDER_STATUS: DialogueIntent = {
  examples: ["where is my order", "track my order", "has my order shipped"],
  tool: "order_status",
  slots: [{ name: "order_id", question: "What is your order number?" }],
  reply: "Your order {{order_id}} is {{status}}.",
  failure: "Sorry, I could not look up your order right now.",
};
const OPENING_HOURS = { question: "What are your opening hours?", answer: "We are open Monday to Friday, 9 AM to 5 PM." };

function open(answer?: (name: string, args: Record<string, unknown>) => ToolResult) {
  const tools = recordingTools(answer);
  const session = createRulesDialogueProvider({ now: () => new Date("2025-03-03T10:00:00Z") }).open({
    agent: testAgent({ intents: [ORDER_STATUS], metadata: { business_name: "Acme Shop", faq: [OPENING_HOURS] } }),
    context: {},
    tools,
  });
  return { session, tools };
}

describe("intents in the rules dialogue", () => {
  it("asks for the argument, calls the tool with the caller's answer, and says the reply filled from its answer", async () => {
    const { session, tools } = open((name, args) => ({ ok: true, data: { order_id: args.order_id, status: "on its way" } }));
    expect(spoken(await say(session, "hi can you tell me where my order is"))).toBe("What is your order number?");
    expect(tools.take()).toEqual([]);
    expect(spoken(await say(session, "yes it is a one two three four"))).toBe("Your order 1234 is on its way. Is there anything else I can help you with?");
    expect(tools.take()).toEqual([{ name: "order_status", arguments: { order_id: "1234" } }]);
  });

  it("takes a number said with the request as the first answer", async () => {
    const { session, tools } = open(() => ({ ok: true, data: { status: "delivered" } }));
    // {{order_id}} is the caller's argument when the answer has no such key.
    expect(spoken(await say(session, "where is my order five five six seven"))).toMatch(/^Your order 5567 is delivered\./);
    expect(tools.take()).toEqual([{ name: "order_status", arguments: { order_id: "5567" } }]);
  });

  it("says the failure line when the tool fails, never the tool's error", async () => {
    const { session } = open(() => ({ ok: false, error: "the order_status tool failed: its URL answered HTTP 500" }));
    await say(session, "track my order please");
    const said = spoken(await say(session, "my order number is nine nine one"));
    expect(said).toMatch(/^Sorry, I could not look up your order right now\./);
    expect(said).not.toContain("500");
  });

  it("leaves the FAQ and bookings as they were", async () => {
    const { session, tools } = open();
    expect(spoken(await say(session, "what are your opening hours"))).toContain("Monday to Friday");
    expect(tools.take()).toEqual([]);
  });

  it("asks again when the answer is only a hesitation", async () => {
    const { session, tools } = open();
    await say(session, "where is my order");
    expect(spoken(await say(session, "um"))).toMatch(/What is your order number\?$/);
    expect(tools.take()).toEqual([]);
  });
});

describe("a hand-off intent in the rules dialogue", () => {
  const TO_BILLING: DialogueIntent = { examples: ["i have a question about my bill", "billing"], tool: "handoff", slots: [], arguments: { agent_id: "agent_billing" }, reply: "Let me pass you to billing.", failure: "I can't put you through right now." };
  const billing = testAgent({ id: "agent_billing" });
  const openWith = (answer: (name: string, args: Record<string, unknown>) => ToolResult) => {
    const tools = recordingTools(answer);
    const session = createRulesDialogueProvider().open({ agent: testAgent({ intents: [TO_BILLING] }), context: {}, tools });
    return { session, tools };
  };

  it("calls the tool with the intent's fixed arguments, says the reply and passes the caller on, asking nothing more", async () => {
    const { session, tools } = openWith(() => ({ ok: true, data: { status: "handing_off" }, then: { handoff: { agent: billing, tools: [] } } }));
    const events = await say(session, "hello i have a question about my bill");
    expect(spoken(events)).toBe("Let me pass you to billing.");
    expect(events.at(-1)).toEqual({ type: "handoff", handoff: { agent: billing, tools: [] } });
    expect(tools.take()).toEqual([{ name: "handoff", arguments: { agent_id: "agent_billing" } }]);
  });

  it("goes before the built-in answer to an existing appointment: the integrator's intent decides", async () => {
    const toBookings: DialogueIntent = { ...TO_BILLING, examples: ["i need to cancel my appointment"], reply: "Let me pass you to our bookings desk." };
    const tools = recordingTools(() => ({ ok: true, data: {}, then: { handoff: { agent: billing, tools: [] } } }));
    const session = createRulesDialogueProvider().open({ agent: testAgent({ intents: [toBookings] }), context: {}, tools });
    expect(spoken(await say(session, "i need to cancel my appointment"))).toBe("Let me pass you to our bookings desk.");
    // Without such an intent, the built-in answer as before.
    const plain = createRulesDialogueProvider().open({ agent: testAgent(), context: {}, tools: recordingTools() });
    expect(spoken(await say(plain, "i need to cancel my appointment"))).toMatch(/only book new appointments/);
  });

  it("says the failure line and stays when the hand-off is refused", async () => {
    const { session } = openWith(() => ({ ok: false, error: "that agent is no longer available" }));
    const events = await say(session, "billing");
    expect(spoken(events)).toMatch(/^I can't put you through right now\./);
    expect(events.some((e) => e.type === "handoff")).toBe(false);
  });
});

describe("matching an intent and reading a slot's answer", () => {
  const index = buildIntentIndex([ORDER_STATUS]);
  it.each(["where is my order", "has my order shipped yet", "i would like to track my order"])("matches %s", (text) => {
    expect(matchIntent(index, toUtterance(text))).toBe(ORDER_STATUS);
  });
  it.each(["what are your opening hours", "i would like to book a cleaning", "hello"])("does not match %s", (text) => {
    expect(matchIntent(index, toUtterance(text))).toBeNull();
  });
  it.each([
    ["a one two three", "123"],
    ["it's 4 5 6", "456"],
    ["my order number is double seven eight", "778"],
    ["it is jane doe", "jane doe"],
    ["the email is jane at example dot com", "jane at example dot com"],
    ["um", "um"],
  ])("reads %j as %j", (text, value) => {
    expect(slotAnswer(toUtterance(text))).toBe(value);
  });
});
