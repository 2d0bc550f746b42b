import { describe, expect, it } from "vitest";
import type { DialogueEvent, DialogueOpenOptions, DialogueProvider } from "../../../../engine/providers/llm/dialogue-provider.js";
import { FLITE_VOICES } from "../../../../engine/providers/tts/flite/flite-voices.js";
import type { ToolDefinition, ToolExecutor, ToolResult } from "../../../../engine/tools.js";
import { testAgent } from "../../../helpers/dialogue.js";
import { keysAsText, plannedAsr, recordingTts, startCall } from "../../../helpers/call-session-harness.js";

// A hand-off (issue 31): the dialogue passes the caller to another agent, which takes the call
// over on the same line with its voice, its prompt (a new dialogue) and its tools.

const billing = testAgent({ id: "agent_billing", name: "Bill", voiceId: "openai-nova", firstMessage: "Billing here, what can I do for you?", systemPrompt: "You answer billing questions." });
const billingTools: ToolDefinition[] = [{ name: "refund", description: "Refunds an order.", parameters: { type: "object", properties: {} } }];
const PASSING_ON = "Let me pass you to our billing agent.";

/** The front desk hands off at its first turn; the billing agent answers "Billing reply <n>." Notes how each dialogue was opened. */
function handingOff() {
  const opened: DialogueOpenOptions[] = [];
  const provider: DialogueProvider = {
    name: "handing-off",
    open: (options) => {
      opened.push(options);
      let turns = 0;
      return {
        async *respond(): AsyncIterable<DialogueEvent> {
          turns++;
          if (options.agent.id === billing.id) {
            yield { type: "text", text: `Billing reply ${turns}.` };
            return;
          }
          yield { type: "text", text: PASSING_ON };
          yield { type: "handoff", handoff: { agent: billing, tools: billingTools } };
        },
        truncateLastReply: () => {},
        ...keysAsText,
      };
    },
  };
  return { provider, opened };
}

/** The call's tools: answers every run, noting it. */
function notingTools(): ToolExecutor & { runs: string[] } {
  const runs: string[] = [];
  return {
    runs,
    definitions: [{ name: "book_appointment", description: "Books.", parameters: { type: "object", properties: {} } }],
    execute: async (name: string): Promise<ToolResult> => {
      runs.push(name);
      return { ok: true, data: {} };
    },
  };
}

describe("a hand-off between agents on one call", () => {
  it("changes the voice, opens the new agent's dialogue with the conversation so far and its tools, and keeps one transcript", async () => {
    const { provider, opened } = handingOff();
    const tts = recordingTts(FLITE_VOICES);
    const tools = notingTools();
    const call = await startCall({ asr: plannedAsr(["i have a question about my bill", "why was i charged twice"]), dialogue: provider, tts }, { id: "agent_front", voiceId: "openai-alloy", firstMessage: "Front desk, hello." }, { tools });
    await call.untilAgentLines(1);
    await call.say();
    // The front desk's last line, then the billing agent's first message.
    await call.untilAgentLines(3);
    await call.say();

    expect(call.transcript()).toEqual([
      "agent: Front desk, hello.",
      "user: i have a question about my bill",
      `agent: ${PASSING_ON}`,
      `agent: ${billing.firstMessage}`,
      "user: why was i charged twice",
      "agent: Billing reply 1.",
    ]);
    // Said in each agent's voice.
    expect(tts.said).toEqual([
      { text: "Front desk, hello.", voiceId: "openai-alloy" },
      { text: PASSING_ON, voiceId: "openai-alloy" },
      { text: billing.firstMessage, voiceId: "openai-nova" },
      { text: "Billing reply 1.", voiceId: "openai-nova" },
    ]);
    // The new agent's segments name it; the first agent's do not.
    const segments = call.transport.events.flatMap((e) => (e.type === "transcript" && e.segment.role === "agent" ? [e.segment] : []));
    expect(segments.map((s) => s.agent_id)).toEqual([undefined, undefined, "agent_billing", "agent_billing"]);
    expect(call.transport.events.filter((e) => e.type === "handoff")).toEqual([{ type: "handoff", fromAgentId: "agent_front", toAgentId: "agent_billing", toAgentName: "Bill" }]);

    // The billing dialogue: its own agent and tools, the conversation up to the hand-off, the call's executor behind them.
    expect(opened).toHaveLength(2);
    expect(opened[0]!.history).toBeUndefined();
    expect(opened[1]!.agent).toBe(billing);
    expect(opened[1]!.tools.definitions).toEqual(billingTools);
    expect(opened[1]!.history?.map((s) => `${s.role}: ${s.content}`)).toEqual(["agent: Front desk, hello.", "user: i have a question about my bill", `agent: ${PASSING_ON}`]);
    await opened[1]!.tools.execute("refund", {}, new AbortController().signal);
    expect(tools.runs).toEqual(["refund"]);

    const summary = await call.session.stop();
    expect(summary.reason).toBe("stopped");
    expect(summary.actions).toContainEqual({ type: "handoff", agentId: "agent_billing" });
  });

  it("has the new agent listen at once when it has no first message", async () => {
    const { provider, opened } = handingOff();
    const quiet = { ...billing, firstMessage: null };
    const dialogue: DialogueProvider = {
      name: "quiet-handoff",
      open: (options) => {
        const session = provider.open(options);
        return options.agent.id === billing.id ? session : { ...session, respond: async function* () { yield { type: "text", text: PASSING_ON } as const; yield { type: "handoff", handoff: { agent: quiet, tools: [] } } as const; } };
      },
    };
    const call = await startCall({ asr: plannedAsr(["billing please", "a refund"]), dialogue }, { id: "agent_front" });
    await call.say();
    await call.say();
    expect(call.transcript()).toEqual(["user: billing please", `agent: ${PASSING_ON}`, "user: a refund", "agent: Billing reply 1."]);
    expect(opened.map((o) => o.agent.id)).toEqual(["agent_front", "agent_billing"]);
    await call.session.stop();
  });
});
