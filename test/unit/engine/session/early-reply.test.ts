import { describe, expect, it } from "vitest";
import type { ToolExecutor } from "../../../../engine/tools.js";
import type { DialogueProvider, DialogueEvent } from "../../../../engine/providers/llm/dialogue-provider.js";
import { createRulesDialogueProvider } from "../../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import { keysAsText, plannedAsr, startCall } from "../../../helpers/call-session-harness.js";

describe("call session: early replies (adaptive endpointing)", () => {
  const adaptive = { endpointingMode: "adaptive", endpointingMs: 1500 } as const;
  const earlyEvents = (call: Awaited<ReturnType<typeof startCall>>) => call.transport.events.flatMap((e) => (e.type === "early_reply" ? [e.used] : []));

  it("prepares the reply to words the dialogue cannot judge while the turn waits, and says it when the turn ends with them", async () => {
    const call = await startCall({ asr: plannedAsr(["purple elephants sing"]), dialogue: createRulesDialogueProvider() }, adaptive);
    await call.say();
    await call.session.stop();
    expect(earlyEvents(call)).toEqual([true]);
    expect(call.transcript()[0]).toBe("user: purple elephants sing");
    expect(call.transcript()[1]).toMatch(/^agent: Sorry/);
    const [turn] = call.summary()!.turns;
    // The reply's text was ready before the turn was declared over (UNKNOWN_WAIT_MS after the last word).
    expect(turn!.firstTokenAt!).toBeLessThan(turn!.endpointAt!);
    expect(turn!.endpointAt! - turn!.endOfSpeechAt!).toBeGreaterThanOrEqual(580);
  });

  it("drops the early reply unheard when the caller goes on, and the conversation is as if it had never been asked", async () => {
    const call = await startCall({ asr: plannedAsr(["purple elephants", "sing loudly"]), dialogue: createRulesDialogueProvider() }, adaptive);
    await call.caller(400, 500);
    await call.caller(400);
    await call.caller(400, 500);
    await call.untilAgentLines(1);
    await call.session.stop();
    expect(earlyEvents(call)).toEqual([false, true]);
    expect(call.transcript()[0]).toBe("user: purple elephants sing loudly");
    // The first misunderstanding of the call (the dropped reply was not counted as one).
    const first = await startCall({ asr: plannedAsr(["purple elephants sing loudly"]), dialogue: createRulesDialogueProvider() }, adaptive);
    await first.say();
    await first.session.stop();
    expect(call.transcript()[1]).toBe(first.transcript()[1]);
    expect(call.transcript().filter((l) => l.startsWith("agent:"))).toHaveLength(1);
  });

  it("runs an early reply's tools only once it is the answer", async () => {
    const ran: string[] = [];
    const tools: ToolExecutor = { definitions: [], execute: async (name) => (ran.push(name), { ok: true, data: {} }) };
    const booking: DialogueProvider = {
      name: "booking",
      open: ({ tools: callTools }) => ({
        async *respond(text: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
          const result = await callTools.execute("book_appointment", { text }, signal);
          yield { type: "text", text: result.ok ? "Booked." : "Not booked." };
        },
        truncateLastReply: () => {},
        judgeTurn: () => "unknown",
        checkpoint: () => () => {},
        ...keysAsText,
      }),
    };
    const call = await startCall({ asr: plannedAsr(["book it", "for tuesday"]), dialogue: booking }, adaptive, { tools });
    await call.caller(400, 500);
    await call.caller(400);
    // The first early reply was dropped: its booking never ran.
    expect(ran).toEqual([]);
    await call.caller(400, 500);
    await call.untilAgentLines(1);
    await call.session.stop();
    expect(ran).toEqual(["book_appointment"]);
    expect(call.transcript()).toEqual(["user: book it for tuesday", "agent: Booked."]);
    expect(call.summary()!.actions).toEqual([{ type: "tool_call", name: "book_appointment", arguments: { text: "book it for tuesday" }, result: { ok: true, data: {} } }]);
  });
});
