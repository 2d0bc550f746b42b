import { describe, expect, it } from "vitest";
import { KEYPAD_GAP_MS } from "../../../../engine/session/keypad-entry.js";
import type { DialogueProvider, DialogueEvent } from "../../../../engine/providers/llm/dialogue-provider.js";
import { plannedAsr, startCall } from "../../../helpers/call-session-harness.js";

describe("call session: keys the caller presses", () => {
  /** Answers speech with "Said <text>." and keys with a long reply naming them. */
  const keyed: DialogueProvider = {
    name: "keyed",
    open: () => ({
      async *respond(text: string): AsyncIterable<DialogueEvent> {
        for (let i = 1; i <= 20; i++) yield { type: "text", text: ` Said ${text} ${i}.` };
      },
      async *respondToKeys(keys: string): AsyncIterable<DialogueEvent> {
        yield { type: "text", text: `You pressed ${keys}.` };
      },
      truncateLastReply: () => {},
    }),
  };
  const press = (call: Awaited<ReturnType<typeof startCall>>, digit: string) => call.transport.emit("dtmf", digit);

  it("gives keys pressed within KEYPAD_GAP_MS of each other to the dialogue as one entry, after the pause; # ends an entry at once", async () => {
    const call = await startCall({ dialogue: keyed });
    press(call, "4");
    await call.caller(300);
    press(call, "2");
    await call.caller(KEYPAD_GAP_MS - 100);
    expect(call.transcript()).toEqual([]);
    await call.caller(400);
    expect(call.transcript()).toEqual(["user: [pressed 42]", "agent: You pressed 42."]);
    press(call, "7");
    press(call, "#");
    await call.caller(200);
    expect(call.transcript().slice(2)).toEqual(["user: [pressed 7]", "agent: You pressed 7."]);
    // "#" alone is no entry.
    press(call, "#");
    await call.caller(KEYPAD_GAP_MS + 200);
    expect(call.transcript()).toHaveLength(4);
    expect(call.transport.events.filter((e) => e.type === "dtmf").map((e) => (e.type === "dtmf" ? e.digit : ""))).toEqual(["4", "2", "7", "#", "#"]);
  });

  it("drops keys past 20 a second, so a flood of key events makes one entry, not a turn per key", async () => {
    const call = await startCall({ dialogue: keyed });
    for (let i = 0; i < 500; i++) press(call, String(i % 10));
    await call.caller(KEYPAD_GAP_MS + 200);
    expect(call.transcript()).toEqual(["user: [pressed 01234567890123456789]", "agent: You pressed 01234567890123456789."]);
    expect(call.transport.events.filter((e) => e.type === "dtmf")).toHaveLength(20);
    expect(call.errors()).toEqual([true]);
    // A second later keys count again.
    press(call, "5");
    await call.caller(KEYPAD_GAP_MS + 200);
    expect(call.transcript().slice(2)).toEqual(["user: [pressed 5]", "agent: You pressed 5."]);
  });

  it("stops the agent at the first key, a turn cut short like a barge-in", async () => {
    const call = await startCall({ asr: plannedAsr(["tell me"]), dialogue: keyed });
    await call.caller(400, 500);
    await call.caller(800);
    // The 2 s reply is playing.
    expect(call.transport.events.some((e) => e.type === "state" && e.state === "speaking")).toBe(true);
    press(call, "1");
    expect(call.transport.events.find((e) => e.type === "interruption")).toMatchObject({ turnId: 1 });
    await call.caller(KEYPAD_GAP_MS + 400);
    expect(call.transcript().slice(-2)).toEqual(["user: [pressed 1]", "agent: You pressed 1."]);
    await call.session.stop();
    expect(call.summary()!.turns.map((t) => t.interrupted)).toEqual([true, false]);
  });
});

describe("call session: the caller's last words when the call ends", () => {
  it("keeps keys pressed within the entry gap before the hang-up", async () => {
    const call = await startCall({});
    call.transport.emit("dtmf", "4");
    call.transport.emit("dtmf", "2");
    await call.caller(200);
    call.transport.emit("hangup", "bye");
    expect((await call.session.ended).transcript.map((s) => s.content)).toEqual(["[pressed 42]"]);
  });
});
