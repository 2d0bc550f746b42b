import { describe, expect, it } from "vitest";
import type { CallEvent } from "../../../../engine/call-events.js";
import { ChatDialogueProvider } from "../../../../engine/providers/llm/chat-dialogue-provider.js";
import type { ChatStreamSource } from "../../../../engine/providers/llm/chat-dialogue-session.js";
import type { DialogueEvent, DialogueProvider } from "../../../../engine/providers/llm/dialogue-provider.js";
import type { ChatCompletionRequest } from "../../../../engine/providers/llm/openai/chat-completions-wire.js";
import { FLITE_VOICES } from "../../../../engine/providers/tts/flite/flite-voices.js";
import { SUPERVISOR_TEXT_MAX_CHARS } from "../../../../engine/supervisor-text.js";
import { toNativeMessage } from "../../../../engine/transports/websocket/native-protocol.js";
import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import type { AsrProvider, AsrResult } from "../../../../engine/providers/asr/asr-provider.js";
import { keysAsText, lengthyTts, plannedAsr, recordingTts, startCall } from "../../../helpers/call-session-harness.js";
import { testAgent } from "../../../helpers/dialogue.js";

// Live supervision, engine side (issue 32): a supervisor has the agent say a line (`say`) or
// guides its next replies without a word to the caller (`whisper`).

/** A dialogue answering "Reply <n>.", noting in order what it was asked, told and given. */
function notingDialogue() {
  const log: string[] = [];
  let turns = 0;
  const provider: DialogueProvider = {
    name: "noting",
    open: () => ({
      async *respond(text: string): AsyncIterable<DialogueEvent> {
        log.push(`respond: ${text}`);
        yield { type: "text", text: `Reply ${++turns}.` };
      },
      truncateLastReply: (heard) => void log.push(`truncate: ${heard}`),
      agentSaid: (text) => void log.push(`said: ${text}`),
      guide: (text) => void log.push(`guide: ${text}`),
      ...keysAsText,
    }),
  };
  return { provider, log };
}

/** A chat model that answers every request with `reply`, keeping the requests. */
function chatModel(reply = "Sure.") {
  const requests: ChatCompletionRequest[] = [];
  const source: ChatStreamSource = {
    async *stream(request) {
      requests.push(request);
      yield { content: reply, toolCalls: [] };
    },
  };
  return { provider: new ChatDialogueProvider("chat", source, { models: {}, now: () => new Date("2025-03-01T10:00:00Z") }), requests };
}

const supervisorEvents = (events: CallEvent[]) => events.filter((e) => e.type === "supervisor");

describe("say: a supervisor's line spoken by the agent", () => {
  it("is said at once while the agent listens, in the agent's voice, announced, and kept in the transcript and the dialogue as the agent's words", async () => {
    const { provider, log } = notingDialogue();
    const tts = recordingTts(FLITE_VOICES);
    const call = await startCall({ dialogue: provider, tts }, { voiceId: "flite-slt" });
    call.session.say("  Hello, I'm Sam, the manager.  ");
    await call.untilAgentLines(1);
    expect(call.transcript()).toEqual(["agent: Hello, I'm Sam, the manager."]);
    expect(tts.said).toEqual([{ text: "Hello, I'm Sam, the manager.", voiceId: "flite-slt" }]);
    expect(supervisorEvents(call.transport.events)).toEqual([{ type: "supervisor", action: "say", text: "Hello, I'm Sam, the manager." }]);
    expect(log).toEqual(["said: Hello, I'm Sam, the manager."]);
    // No caller spoke: the dialogue answered nothing.
    expect(call.summary()).toBeUndefined();
  });

  it("waits for the turn the agent is saying to end (never cuts it), then is said", async () => {
    const tts = lengthyTts({ "One.": 500, "Two.": 500, "Three.": 500 });
    const call = await startCall({ tts }, { firstMessage: "One. Two. Three." });
    await call.caller(300);
    call.session.say("A word from the manager.");
    await call.untilAgentLines(2);
    expect(call.transcript()).toEqual(["agent: One. Two. Three.", "agent: A word from the manager."]);
    expect(tts.asked).toEqual(["One.", "Two.", "Three.", "A word from the manager."]);
    expect(call.transport.events.some((e) => e.type === "interruption")).toBe(false);
    // Announced as it begins: after the greeting was heard in full.
    const events = call.transport.events;
    const greetingHeard = events.findIndex((e) => e.type === "transcript" && e.segment.content === "One. Two. Three.");
    const announced = events.findIndex((e) => e.type === "supervisor");
    expect(greetingHeard).toBeGreaterThanOrEqual(0);
    expect(announced).toBeGreaterThan(greetingHeard);
  });

  it("given while the caller speaks, waits for their turn to end and comes before the dialogue's reply, which is asked after the line was said", async () => {
    const { provider, log } = notingDialogue();
    const call = await startCall({ asr: plannedAsr(["i would like to book a cleaning"]), dialogue: provider });
    await call.caller(200, 500);
    call.session.say("One moment please.");
    await call.caller(200, 500);
    // Nothing is said over the caller.
    expect(call.transcript()).toEqual([]);
    expect(supervisorEvents(call.transport.events)).toEqual([]);
    await call.untilAgentLines(2);
    expect(call.transcript()).toEqual(["user: i would like to book a cleaning", "agent: One moment please.", "agent: Reply 1."]);
    expect(log).toEqual(["said: One moment please.", "respond: i would like to book a cleaning"]);
  });

  it("given after the caller's turn ended but before its words are recognized, still comes before the reply to them", async () => {
    const { provider, log } = notingDialogue();
    let recognize!: () => void;
    const slowAsr: AsrProvider = {
      name: "slow",
      open: async () => ({
        async *transcribe(audio: AsyncIterable<AudioFrame>): AsyncIterable<AsrResult> {
          for await (const _ of audio);
          await new Promise<void>((resolve) => (recognize = resolve));
          yield { type: "final", text: "is anyone there" };
        },
        close: async () => {},
      }),
    };
    const call = await startCall({ asr: slowAsr, dialogue: provider });
    await call.caller(400, 500);
    // The turn ends 500 ms into the silence; its words are still being recognized.
    await call.caller(800);
    call.session.say("Yes, I'm here.");
    await call.caller(200);
    expect(call.transcript()).toEqual([]);
    recognize();
    await call.untilAgentLines(2);
    expect(call.transcript()).toEqual(["user: is anyone there", "agent: Yes, I'm here.", "agent: Reply 1."]);
    expect(log).toEqual(["said: Yes, I'm here.", "respond: is anyone there"]);
  });

  it("cut short by the caller: the dialogue keeps what was heard of it (never a truncated reply), and the caller's words are answered", async () => {
    const { provider, log } = notingDialogue();
    const line = "Please stay on the line. A colleague of mine will take over this call in a moment.";
    const tts = lengthyTts({ "Please stay on the line.": 1_000, "A colleague of mine will take over this call in a moment.": 2_000 });
    const call = await startCall({ asr: plannedAsr(["who are you"]), dialogue: provider, tts });
    call.session.say(line);
    await call.caller(1_300);
    // 600 ms of speech over the line interrupts it.
    await call.caller(600, 500);
    await call.untilAgentLines(2);
    expect(call.transport.events.some((e) => e.type === "interruption")).toBe(true);
    const said = log.filter((entry) => entry.startsWith("said: "));
    expect(said).toHaveLength(1);
    const heard = said[0]!.slice("said: ".length);
    expect(line.startsWith(heard)).toBe(true);
    expect(heard.length).toBeLessThan(line.length);
    expect(heard).toMatch(/^Please stay on the line\./);
    expect(call.transcript()).toEqual([`agent: ${heard}`, "user: who are you", "agent: Reply 1."]);
    expect(log.some((entry) => entry.startsWith("truncate: "))).toBe(false);
    expect(log.at(-1)).toBe("respond: who are you");
  });

  it("refuses an empty text or one over 1000 characters with a RangeError, and says nothing", async () => {
    const call = await startCall({});
    for (const text of ["", "   \n ", "x".repeat(SUPERVISOR_TEXT_MAX_CHARS + 1)]) {
      expect(() => call.session.say(text)).toThrow(RangeError);
      expect(() => call.session.whisper(text)).toThrow(RangeError);
    }
    expect(() => call.session.say("x".repeat(SUPERVISOR_TEXT_MAX_CHARS))).not.toThrow();
    await call.untilAgentLines(1);
    expect(supervisorEvents(call.transport.events)).toHaveLength(1);
  });
});

describe("whisper: a supervisor's guidance, never spoken", () => {
  it("reaches the chat model's next requests as instructions, is never said, transcribed or sent to the caller's client", async () => {
    const guidance = "Offer the caller a 10% discount on their next cleaning.";
    const model = chatModel("Of course.");
    const tts = recordingTts(FLITE_VOICES);
    const call = await startCall({ asr: plannedAsr(["can you help me", "thanks"]), dialogue: model.provider, tts });
    call.session.whisper(guidance);
    await call.say();
    await call.say();
    expect(model.requests).toHaveLength(2);
    for (const request of model.requests) {
      expect(request.messages[0]).toMatchObject({ role: "system" });
      expect(request.messages[0]!.content).toContain(`Supervisor guidance`);
      expect(request.messages[0]!.content).toContain(guidance);
      // Only in the instructions: no turn of the conversation carries it.
      expect(request.messages.slice(1).some((m) => (m.content ?? "").includes(guidance))).toBe(false);
    }
    expect(tts.said.map((s) => s.text)).toEqual(["Of course.", "Of course."]);
    expect(call.transcript().some((line) => line.includes(guidance))).toBe(false);
    const whispered = supervisorEvents(call.transport.events);
    expect(whispered).toEqual([{ type: "supervisor", action: "whisper", text: guidance }]);
    // The native protocol's client is the caller: the event is not one it is sent.
    expect(toNativeMessage(whispered[0]!)).toBeNull();
  });

  it("a line said is in the chat model's history as the agent's, before the caller's next words", async () => {
    const model = chatModel("Of course.");
    const call = await startCall({ asr: plannedAsr(["yes please"]), dialogue: model.provider });
    call.session.say("Would you like an earlier appointment?");
    await call.untilAgentLines(1);
    await call.say();
    expect(model.requests[0]!.messages.slice(1)).toEqual([
      { role: "assistant", content: "Would you like an earlier appointment?" },
      { role: "user", content: "yes please" },
    ]);
  });

  it("holds for the rest of the call: the dialogue of an agent the call is handed to is given it too", async () => {
    const billing = testAgent({ id: "agent_billing", name: "Bill", firstMessage: "Billing here." });
    const guided: Array<{ agent: string; text: string }> = [];
    const provider: DialogueProvider = {
      name: "handing-off",
      open: ({ agent }) => ({
        async *respond(): AsyncIterable<DialogueEvent> {
          yield { type: "text", text: "Passing you on." };
          if (agent.id !== billing.id) yield { type: "handoff", handoff: { agent: billing, tools: [] } };
        },
        truncateLastReply: () => {},
        guide: (text) => void guided.push({ agent: agent.id, text }),
        ...keysAsText,
      }),
    };
    const call = await startCall({ asr: plannedAsr(["my bill is wrong"]), dialogue: provider }, { id: "agent_front" });
    call.session.whisper("The caller is a VIP.");
    await call.say();
    await call.untilAgentLines(2);
    expect(call.transcript()).toEqual(["user: my bill is wrong", "agent: Passing you on.", "agent: Billing here."]);
    expect(guided).toEqual([
      { agent: "agent_front", text: "The caller is a VIP." },
      { agent: "agent_billing", text: "The caller is a VIP." },
    ]);
  });

  it("is given to the dialogue, and is ignored by one that cannot follow it (the rules dialogue)", async () => {
    const { provider, log } = notingDialogue();
    const call = await startCall({ dialogue: provider });
    call.session.whisper("Be brief.");
    expect(log).toEqual(["guide: Be brief."]);
    // The rules dialogue has it as a no-op: nothing said, the call goes on.
    const rules = await startCall({});
    rules.session.whisper("Be brief.");
    await rules.caller(1_000);
    expect(rules.transcript()).toEqual([]);
    expect(rules.summary()).toBeUndefined();
  });
});

describe("say and whisper on a call that ended", () => {
  it("do nothing", async () => {
    const { provider, log } = notingDialogue();
    const call = await startCall({ dialogue: provider });
    await call.session.stop();
    const events = call.transport.events.length;
    call.session.say("Are you still there?");
    call.session.whisper("Be brief.");
    await call.caller(1_000);
    expect(call.transport.events).toHaveLength(events);
    expect(log).toEqual([]);
    expect(call.summary()!.transcript).toEqual([]);
  });
});

describe("take-over: a supervisor talks to the caller in the agent's place", () => {
  it("stops the agent at once; the caller's words are transcribed, not answered; at hand-back the dialogue is told them and answers the next turn", async () => {
    const { provider, log } = notingDialogue();
    const tts = lengthyTts({ "One.": 500, "Two.": 500, "Three.": 500 });
    const call = await startCall({ asr: plannedAsr(["i want a refund", "thanks"]), dialogue: provider, tts }, { firstMessage: "One. Two. Three." });
    await call.caller(300);
    call.session.takeOver();
    // What was heard of the greeting is kept; the agent is silent and listens.
    expect(call.transport.events.some((e) => e.type === "interruption")).toBe(true);
    await call.caller(400, 500);
    await call.caller(2_000);
    expect(call.transcript().at(-1)).toBe("user: i want a refund");
    expect(log.filter((entry) => entry.startsWith("respond: "))).toEqual([]);
    // A line asked for meanwhile waits for the hand-back.
    call.session.say("Back to you.");
    await call.caller(500);
    expect(call.transcript().some((line) => line.endsWith("Back to you."))).toBe(false);

    call.session.handBack();
    await call.untilAgentLines(2);
    expect(call.transcript().at(-1)).toBe("agent: Back to you.");
    expect(log).toContain('guide: A supervisor spoke with the caller in your place. Meanwhile the caller said: "i want a refund". Carry on from there.');
    await call.say();
    expect(call.transcript().slice(-2)).toEqual(["user: thanks", "agent: Reply 1."]);
    expect(supervisorEvents(call.transport.events).map((e) => e.type === "supervisor" && e.action)).toEqual(["takeover", "handback", "say"]);
  });

  it("does nothing on an ended call, nor a hand-back without a take-over", async () => {
    const call = await startCall({});
    call.session.handBack();
    await call.session.stop();
    call.session.takeOver();
    expect(supervisorEvents(call.transport.events)).toEqual([]);
  });
});
