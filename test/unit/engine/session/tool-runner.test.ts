import { describe, expect, it } from "vitest";
import { TOOL_HOLD_LINE } from "../../../../engine/session/tool-runner.js";
import type { ToolExecutor, ToolResult } from "../../../../engine/tools.js";
import type { DialogueProvider, DialogueEvent } from "../../../../engine/providers/llm/dialogue-provider.js";
import type { FakeClock } from "../../../helpers/fake-clock.js";
import { keysAsText, plannedAsr, startCall } from "../../../helpers/call-session-harness.js";

describe("call session: tools the dialogue waits for", () => {
  /** Runs `tool` for every caller turn and says what it came to. */
  const toolUser: DialogueProvider = {
    name: "tool-user",
    open: ({ tools }) => ({
      async *respond(_text: string, signal: AbortSignal): AsyncIterable<DialogueEvent> {
        const result = await tools.execute("book_appointment", { date: "2025-03-04" }, signal);
        yield { type: "text", text: result.ok ? "You're booked." : "Sorry, I couldn't book that." };
      },
      truncateLastReply: () => {},
        ...keysAsText,
    }),
  };
  const answerAfter = (ms: number, result: ToolResult, clockOf: () => FakeClock): ToolExecutor => ({
    definitions: [],
    execute: () => new Promise((resolve) => clockOf().setTimeout(() => resolve(result), ms)),
  });

  it("says nothing extra for a quick tool, and reports it with its result", async () => {
    let call: Awaited<ReturnType<typeof startCall>> | undefined;
    const tools = answerAfter(200, { ok: true, data: { status: "booked" } }, () => call!.clock);
    call = await startCall({ asr: plannedAsr(["book it"]), dialogue: toolUser }, {}, { tools });
    await call.say();
    expect(call.transcript()).toEqual(["user: book it", "agent: You're booked."]);
    expect(call.transport.events.find((e) => e.type === "tool_call")).toEqual({
      type: "tool_call",
      name: "book_appointment",
      arguments: { date: "2025-03-04" },
      result: { ok: true, data: { status: "booked" } },
    });
    await call.session.stop();
    expect(call.summary()!.actions).toEqual([{ type: "tool_call", name: "book_appointment", arguments: { date: "2025-03-04" }, result: { ok: true, data: { status: "booked" } } }]);
  });

  it("says 'one moment' while a tool takes longer than 700 ms, then what it came to", async () => {
    let call: Awaited<ReturnType<typeof startCall>> | undefined;
    const tools = answerAfter(2000, { ok: true, data: { status: "booked" } }, () => call!.clock);
    call = await startCall({ asr: plannedAsr(["book it"]), dialogue: toolUser }, {}, { tools });
    await call.say();
    expect(call.transcript()).toEqual(["user: book it", `agent: ${TOOL_HOLD_LINE} You're booked.`]);
  });

  it("gives up on a tool that does not answer within 10 s and lets the dialogue say so", async () => {
    const never: ToolExecutor = { definitions: [], execute: () => new Promise(() => {}) };
    const call = await startCall({ asr: plannedAsr(["book it"]), dialogue: toolUser }, {}, { tools: never });
    await call.say();
    await call.caller(11_000);
    expect(call.transcript()).toEqual(["user: book it", `agent: ${TOOL_HOLD_LINE} Sorry, I couldn't book that.`]);
    const reported = call.transport.events.find((e) => e.type === "tool_call");
    expect(reported).toMatchObject({ result: { ok: false, error: "book_appointment did not answer within 10 s" } });
  });
});
