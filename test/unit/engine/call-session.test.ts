import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../engine/audio/audio-frame.js";
import { ASR_FALLBACK_LINE, CallSession, LAST_WORDS_WAIT_MS, REPLY_FALLBACK_LINE, SILENCE_TIMEOUT_LINE } from "../../../engine/call-session.js";
import { AsrError } from "../../../engine/providers/asr/asr-error.js";
import type { AsrProvider, AsrResult } from "../../../engine/providers/asr/asr-provider.js";
import type { DialogueProvider, DialogueEvent } from "../../../engine/providers/llm/dialogue-provider.js";
import { ChatCompletionsError } from "../../../engine/providers/llm/openai/chat-completions-error.js";
import { createRulesDialogueProvider } from "../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import { FLITE_VOICES } from "../../../engine/providers/tts/flite/flite-voices.js";
import { OpenAiSpeechError } from "../../../engine/providers/tts/openai/openai-speech-error.js";
import type { TtsProvider } from "../../../engine/providers/tts/tts-provider.js";
import { testAgent } from "../../helpers/dialogue.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { RATE, FRAME, RecordingTransport, energyVad, recordingTts, tick, keysAsText, callWhereCallerSays, plannedDialogue, plannedAsr, unavailable, startCall, sessionOn, lengthyTts } from "../../helpers/call-session-harness.js";
import { COMPLETE_WAIT_MS } from "../../../engine/turn/adaptive-turn-detector.js";
import { SpeechCache } from "../../../engine/providers/tts/speech-cache.js";
import { greetingSentences } from "../../../engine/text/greeting.js";

describe("call session: how a dialogue's end of the call is reported", () => {
  it("ends with reason voicemail after leaving the message on an answering machine", async () => {
    const { summary, transport } = await callWhereCallerSays(
      "hi you have reached john smith i cannot take your call right now please leave a message after the tone",
      { business_name: "Acme Dental" },
    );
    expect(summary.reason).toBe("voicemail");
    expect(transport.closedWith).toBe("voicemail");
    expect(transport.events.find((e) => e.type === "ended")).toMatchObject({ type: "ended", reason: "voicemail" });
    // The whole message was played before the call ended: 3 sentences of 100 ms.
    expect(transport.agentFrames).toBe(15);
    expect(summary.transcript.map((s) => s.role)).toEqual(["user", "agent"]);
    expect(summary.transcript[1]!.content).toBe("Hi, this is Acme Dental calling. Please call us back at your convenience. Goodbye.");
  });

  it("ends with reason agent_ended when the dialogue ends the call for another reason (a goodbye)", async () => {
    const { summary, transport } = await callWhereCallerSays("okay goodbye");
    expect(summary.reason).toBe("agent_ended");
    expect(transport.events.find((e) => e.type === "ended")).toMatchObject({ reason: "agent_ended" });
    expect(summary.transcript.at(-1)).toMatchObject({ role: "agent", content: "Thanks for calling. Have a great day. Goodbye." });
  });
});

describe("call session: what the agent did and how each turn went, for the call's record", () => {
  it("lists the agent's actions in the summary: an answered question, then its end decision", async () => {
    const faq = [{ question: "What are your opening hours?", answer: "We open at nine." }];
    const call = await startCall({ asr: plannedAsr(["what are your opening hours"]), dialogue: createRulesDialogueProvider() }, { metadata: { faq } });
    await call.say();
    await call.session.stop();
    expect(call.summary()!.actions).toEqual([{ type: "answered_question", question: "What are your opening hours?" }]);
    const goodbye = await callWhereCallerSays("okay goodbye");
    expect(goodbye.summary.actions).toEqual([{ type: "end_call", reason: "caller_goodbye" }]);
  });

  it("marks the turn the caller cut short as interrupted, and the others not", async () => {
    const longReply: DialogueProvider = {
      name: "long",
      open: () => ({
        async *respond(): AsyncIterable<DialogueEvent> {
          for (let i = 1; i <= 30; i++) yield { type: "text", text: ` Sentence ${i}.` };
        },
        truncateLastReply: () => {},
        ...keysAsText,
      }),
    };
    const call = await startCall({ asr: plannedAsr(["tell me everything", "stop"]), dialogue: longReply }, { firstMessage: "Hello." });
    await call.caller(400);
    await call.caller(400, 500);
    // The turn ends 500 ms into the silence; 300 ms into the 3 s reply the caller speaks over it for 600 ms.
    await call.caller(800);
    await call.caller(600, 500);
    await call.caller(1000);
    await call.session.stop();
    const turns = call.summary()!.turns;
    expect(turns.map((t) => t.interrupted)).toEqual([false, true, false]);
    expect(call.transport.events.find((e) => e.type === "interruption")).toMatchObject({ turnId: 2 });
  });
});

describe("call session: a provider failing a turn", () => {
  it("answers a dialogue failure with the fallback line in the fallback voice, and the next turn works", async () => {
    const call = await startCall({ asr: plannedAsr(["hello", "tuesday please"]), dialogue: plannedDialogue([unavailable(), "ok"]) });
    await call.say();
    expect(call.summary()).toBeUndefined();
    expect(call.transcript()).toEqual(["user: hello", `agent: ${REPLY_FALLBACK_LINE}`]);
    // The agent's voice is not one the fallback TTS has: its first voice speaks.
    expect(call.fallbackTts.said).toEqual([{ text: REPLY_FALLBACK_LINE, voiceId: FLITE_VOICES[0]!.id }]);
    expect(call.errors()).toEqual([true]);

    await call.say();
    expect(call.transcript()).toEqual(["user: hello", `agent: ${REPLY_FALLBACK_LINE}`, "user: tuesday please", "agent: Reply 2."]);
    expect((await call.session.stop()).reason).toBe("stopped");
  });

  it("ends the call with reason error at the third failed turn in a row", async () => {
    const call = await startCall({ asr: plannedAsr(["one", "two", "three"]), dialogue: plannedDialogue([unavailable(), unavailable(), unavailable()]) });
    await call.say();
    await call.say();
    await call.say();
    expect(call.summary()?.reason).toBe("error");
    expect(call.transport.closedWith).toBe("error");
    expect(call.transcript()).toEqual(["user: one", `agent: ${REPLY_FALLBACK_LINE}`, "user: two", `agent: ${REPLY_FALLBACK_LINE}`, "user: three"]);
    expect(call.errors()).toEqual([true, true, false]);
  });

  it("counts failed turns only in a row: a reply answered in full starts again", async () => {
    const plan = [unavailable(), unavailable(), "ok" as const, unavailable(), unavailable()];
    const call = await startCall({ asr: plannedAsr(["a", "b", "c", "d", "e"]), dialogue: plannedDialogue(plan) });
    for (let i = 0; i < plan.length; i++) await call.say();
    expect(call.summary()).toBeUndefined();
    expect(call.transcript().filter((line) => line === `agent: ${REPLY_FALLBACK_LINE}`)).toHaveLength(4);
    expect(call.transcript()).toContain("agent: Reply 3.");
  });

  it("asks the caller to repeat when the recognizer fails the utterance, and goes on", async () => {
    const call = await startCall({
      asr: plannedAsr([new AsrError("recognition_failed", "pocketsphinx failed to decode the utterance", { retryable: true }), "hello"]),
      dialogue: plannedDialogue(["ok"]),
    });
    await call.say();
    expect(call.transcript()).toEqual([`agent: ${ASR_FALLBACK_LINE}`]);
    await call.say();
    expect(call.transcript()).toEqual([`agent: ${ASR_FALLBACK_LINE}`, "user: hello", "agent: Reply 1."]);
    expect(call.summary()).toBeUndefined();
    expect(call.errors()).toEqual([true]);
  });

  it("names the failing provider and its stage in error events (the recognizer as the call's own), and none for an error that is no provider's", async () => {
    const providerOf = (call: Awaited<ReturnType<typeof startCall>>) => call.transport.events.flatMap((e) => (e.type === "error" ? [e.provider ?? null] : []));
    const asrFails = await startCall({
      asr: plannedAsr([new AsrError("recognition_failed", "pocketsphinx failed to decode the utterance", { retryable: true }), "hello"]),
      dialogue: plannedDialogue([unavailable(), "ok"]),
    });
    await asrFails.say();
    await asrFails.say();
    expect(providerOf(asrFails)).toEqual([
      { stage: "asr", name: "planned" },
      { stage: "dialogue", name: "openai" },
    ]);
    await asrFails.session.stop();
    const bug = await startCall({ asr: plannedAsr(["hello"]), dialogue: plannedDialogue([new TypeError("cannot read properties of undefined")]) });
    await bug.say();
    expect(providerOf(bug)).toEqual([null]);
  });

  it("says a greeting the agent's TTS failed in the fallback voice, in the agent's voice when the fallback has it", async () => {
    const greeting = "Hello, thanks for calling.";
    const failing = recordingTts([], (text) => (text === greeting ? new OpenAiSpeechError("speech server answered 503", { status: 503, retryable: true }) : undefined));
    const call = await startCall({ asr: plannedAsr(["hi"]), tts: failing }, { firstMessage: greeting, voiceId: "flite-slt" });
    await call.untilAgentLines(1);
    expect(call.transcript()).toEqual([`agent: ${greeting}`]);
    expect(call.fallbackTts.said).toEqual([{ text: greeting, voiceId: "flite-slt" }]);
    await call.say();
    expect(call.transcript()).toEqual([`agent: ${greeting}`, "user: hi", "agent: Reply 1."]);
  });

  it("speaks in a fallback voice of the agent's voice's gender when it lacks the agent's own", async () => {
    const greeting = "Hello, thanks for calling.";
    const nova = { id: "openai-nova", provider: "openai", name: "nova", language: "en-US", gender: "female" as const, sample_rate: 24000 };
    const failing = recordingTts([nova], (text) => (text === greeting ? new OpenAiSpeechError("speech server answered 503", { status: 503, retryable: true }) : undefined));
    const call = await startCall({ tts: failing }, { firstMessage: greeting, voiceId: "openai-nova" });
    await call.untilAgentLines(1);
    expect(call.fallbackTts.said).toEqual([{ text: greeting, voiceId: FLITE_VOICES.find((v) => v.gender === "female")!.id }]);
    expect((await call.session.stop()).reason).toBe("stopped");
  });

  it("has the fallback voice finish a reply whose speech failed, and still carries out the transfer the reply decided", async () => {
    const line = "Please hold while I transfer you.";
    const transferring: DialogueProvider = {
      name: "transferring",
      open: () => ({
        async *respond(): AsyncIterable<DialogueEvent> {
          yield { type: "text", text: line };
          yield { type: "transfer" };
        },
        truncateLastReply: () => {},
        ...keysAsText,
      }),
    };
    const failing = recordingTts([], (text) => (text === line ? new OpenAiSpeechError("speech server answered 503", { status: 503, retryable: true }) : undefined));
    const call = await startCall({ asr: plannedAsr(["a human please"]), dialogue: transferring, tts: failing }, { transferEnabled: true, transferNumber: "+14155550100" });
    await call.say();
    expect(call.fallbackTts.said.map((s) => s.text)).toEqual([line]);
    expect(call.summary()?.reason).toBe("transferred");
    expect(call.transport.events.find((e) => e.type === "transfer")).toMatchObject({ number: "+14155550100" });
    expect(call.transcript()).toEqual(["user: a human please", `agent: ${line}`]);
  });

  it.each([
    ["a provider error that is not retryable", new ChatCompletionsError("http_status", "HTTP 401", { status: 401, retryable: false })],
    ["an error that is not a provider's (a bug)", new TypeError("cannot read properties of undefined")],
  ])("ends the call at once on %s", async (_, error) => {
    const call = await startCall({ asr: plannedAsr(["hello"]), dialogue: plannedDialogue([error]) });
    await call.say();
    expect(call.summary()?.reason).toBe("error");
    expect(call.transcript()).toEqual(["user: hello"]);
    expect(call.errors()).toEqual([false]);
  });
});

describe("call session: the far end hanging up during set-up", () => {
  it("ends at once when the caller hangs up while the recording file is being opened", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "parley-session-"));
    try {
      const call = sessionOn({ recordingPath: path.join(dir, "call.wav") });
      const started = call.session.start();
      // start() is now awaiting the recorder; the socket closes.
      call.transport.emit("hangup", "caller_hangup");
      await started;
      await call.run(5000);
      // Ending closes the recording file (real I/O, not on the fake clock). Before the fix the
      // call never ended here: it ran towards its maximum duration.
      const summary = await call.session.ended;
      expect(summary.reason).toBe("caller_hangup");
      expect(summary.durationMs).toBeLessThan(1000);
      expect(call.transport.closedWith).toBe("caller_hangup");
      // The recorder that was opening is closed, not left open.
      expect(summary.recording?.path).toBe(path.join(dir, "call.wav"));
      expect(existsSync(path.join(dir, "call.wav"))).toBe(true);
      expect(call.clock.pendingTimers).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ends at once when the connection closed before the session started", async () => {
    const call = sessionOn();
    call.transport.farEndGone = true;
    await call.session.start();
    await call.run(5000);
    expect(call.summary()?.reason).toBe("caller_hangup");
    expect(call.summary()!.durationMs).toBe(0);
    expect(call.transport.agentFrames).toBe(0);
    expect(call.clock.pendingTimers).toBe(0);
  });
});

describe("call session: ending calls nobody speaks in, and ending them politely", () => {
  it("says goodbye and hangs up after the silence timeout when nobody speaks after the greeting", async () => {
    const call = await startCall({}, { firstMessage: "Hello." }, { silenceTimeoutMs: 30_000 });
    await call.caller(29_000);
    expect(call.summary()).toBeUndefined();
    await call.caller(5_000);
    expect(call.summary()?.reason).toBe("silence_timeout");
    expect(call.transcript()).toEqual(["agent: Hello.", `agent: ${SILENCE_TIMEOUT_LINE}`]);
    expect(call.transport.closedWith).toBe("silence_timeout");
    // The greeting (100 ms), 30 s of silence from its last frame, the goodbye (100 ms).
    expect(call.summary()!.durationMs).toBeGreaterThanOrEqual(30_100);
    expect(call.summary()!.durationMs).toBeLessThan(30_300);
  });

  it("counts the silence again from the caller's last speech and the agent's last word", async () => {
    const call = await startCall({ asr: plannedAsr(["hello"]), dialogue: plannedDialogue(["ok"]) }, {}, { silenceTimeoutMs: 30_000 });
    await call.caller(20_000);
    await call.say();
    expect(call.transcript()).toEqual(["user: hello", "agent: Reply 1."]);
    await call.caller(25_000);
    expect(call.summary()).toBeUndefined();
    await call.caller(10_000);
    expect(call.summary()?.reason).toBe("silence_timeout");
  });

  it("never ends a call for silence without a timeout", async () => {
    const call = await startCall({}, { firstMessage: "Hello." });
    await call.caller(120_000);
    expect(call.summary()).toBeUndefined();
    expect((await call.session.stop()).reason).toBe("stopped");
  });

  it("hangUpWith cuts the agent short, says the closing line through the caller's speech, then ends with the reason given", async () => {
    const goodbye = "I have to end the call now. Goodbye.";
    // Said sentence by sentence, 500 ms each.
    const greeting = "One. Two. Three. Four.";
    const tts = lengthyTts({ "One.": 500, "Two.": 500, "Three.": 500, "Four.": 500, [goodbye]: 2_000 });
    const call = await startCall({ tts, asr: plannedAsr(["wait a second"]) }, { firstMessage: greeting });
    await call.caller(500);
    void call.session.hangUpWith(goodbye, "credit_exhausted", 10_000);
    // The caller talks over the closing line: it goes on to its end regardless.
    await call.caller(1_000, 500);
    await call.caller(3_000);
    expect(call.summary()?.reason).toBe("credit_exhausted");
    // The greeting's next sentences were rendered ahead (500 ms at most); the goodbye came last.
    expect(tts.asked[0]).toBe("One.");
    expect(tts.asked.at(-1)).toBe(goodbye);
    expect(call.transcript()).toEqual(["agent: One.", "user: wait a second", `agent: ${goodbye}`]);
    expect(call.transport.events.some((e) => e.type === "interruption")).toBe(false);
  });

  it("hangUpWith ends the call at the deadline when the closing line cannot be said in time", async () => {
    const mute: TtsProvider = { name: "mute", voices: () => [], synthesize: async function* (_text, options) { await new Promise((_, reject) => options.signal.addEventListener("abort", () => reject(options.signal.reason))); } };
    const call = await startCall({ tts: mute });
    void call.session.hangUpWith("Goodbye.", "credit_exhausted", 5_000);
    await call.caller(4_900);
    expect(call.summary()).toBeUndefined();
    await call.caller(200);
    expect(call.summary()?.reason).toBe("credit_exhausted");
  });
});

describe("call session: the caller's last words when the call ends", () => {
  it("keeps in the transcript, unanswered, words the caller said just before hanging up", async () => {
    const call = await startCall({ asr: plannedAsr(["please call me back tomorrow"]), dialogue: plannedDialogue(["ok"]) });
    await call.caller(400, 500);
    call.transport.emit("hangup", "bye");
    const summary = await call.session.ended;
    expect(summary.transcript.map((s) => `${s.role}: ${s.content}`)).toEqual(["user: please call me back tomorrow"]);
    expect(summary.reason).toBe("caller_hangup");
  });

  it("ends the call after LAST_WORDS_WAIT_MS when the recognizer never gives the final", async () => {
    const stuckAsr: AsrProvider = {
      name: "stuck",
      open: async () => ({
        async *transcribe(audio: AsyncIterable<AudioFrame>, signal: AbortSignal): AsyncIterable<AsrResult> {
          for await (const _ of audio);
          await new Promise((resolve) => signal.addEventListener("abort", resolve));
        },
        close: async () => {},
      }),
    };
    const call = await startCall({ asr: stuckAsr });
    await call.caller(400, 500);
    call.transport.emit("hangup", "bye");
    await tick();
    call.clock.advance(LAST_WORDS_WAIT_MS - 20);
    await tick();
    expect(call.summary()).toBeUndefined();
    call.clock.advance(20);
    const summary = await call.session.ended;
    expect(summary.transcript).toEqual([]);
    // The call lasted until the hang-up: the wait is not part of it.
    expect(summary.durationMs).toBe(400);
  });
});

describe("call session: adaptive endpointing", () => {
  const adaptive = { endpointingMode: "adaptive", endpointingMs: 1500 } as const;
  const faq = [{ question: "What are your opening hours?", answer: "We open at nine." }];

  it("answers a complete turn after COMPLETE_WAIT_MS with the reply prepared at the short pause, not after endpointing_ms", async () => {
    const call = await startCall({ asr: plannedAsr(["what are your opening hours"]), dialogue: createRulesDialogueProvider() }, { ...adaptive, metadata: { faq } });
    await call.say();
    await call.session.stop();
    const [turn] = call.summary()!.turns;
    expect(call.transcript()).toEqual(["user: what are your opening hours", "agent: We open at nine. Is there anything else I can help you with?"]);
    // On the fake clock (which moves after each frame is handled, hence one frame's leeway).
    expect(Math.abs(turn!.endpointAt! - turn!.endOfSpeechAt! - COMPLETE_WAIT_MS)).toBeLessThanOrEqual(20);
    // The recognizer finished at the pause, and the reply was ready before the turn was declared over.
    expect(turn!.asrFinalAt! - turn!.endOfSpeechAt!).toBeLessThan(COMPLETE_WAIT_MS);
    expect(turn!.firstTtsAudioAt).toBeLessThan(turn!.endpointAt!);
    expect(call.transport.events.filter((e) => e.type === "early_reply")).toEqual([{ type: "early_reply", used: true }]);
  });

  it("waits through a pause after words that end open and answers the whole sentence once", async () => {
    const call = await startCall(
      { asr: plannedAsr(["i would like to book a cleaning on", "tuesday at three in the afternoon"]), dialogue: createRulesDialogueProvider() },
      { ...adaptive, metadata: { faq } },
    );
    await call.caller(400, 500);
    await call.caller(800);
    await call.caller(400, 500);
    await call.untilAgentLines(1);
    await call.session.stop();
    expect(call.transcript()[0]).toBe("user: i would like to book a cleaning on tuesday at three in the afternoon");
    expect(call.transcript().filter((line) => line.startsWith("agent:"))).toHaveLength(1);
    // The reply knows the day, the time and the service: it asks for the name.
    expect(call.transcript()[1]).toMatch(/name/i);
  });

  it("ends a turn whose words end open at endpointing_ms after the last word", async () => {
    const call = await startCall({ asr: plannedAsr(["i would like to come in on"]), dialogue: plannedDialogue(["ok"]) }, adaptive);
    await call.say();
    await call.session.stop();
    const [turn] = call.summary()!.turns;
    expect(Math.abs(turn!.endpointAt! - turn!.endOfSpeechAt! - 1500)).toBeLessThanOrEqual(20);
  });

  it("with endpointing_mode fixed, a pause of endpointing_ms splits the sentence into two turns", async () => {
    const call = await startCall(
      { asr: plannedAsr(["i would like to book a cleaning on", "tuesday at three in the afternoon"]), dialogue: plannedDialogue(["ok", "ok"]) },
      { endpointingMode: "fixed", endpointingMs: 500 },
    );
    await call.caller(400, 500);
    await call.caller(800);
    await call.caller(400, 500);
    await call.untilAgentLines(2);
    await call.session.stop();
    expect(call.transcript()).toEqual(["user: i would like to book a cleaning on", "agent: Reply 1.", "user: tuesday at three in the afternoon", "agent: Reply 2."]);
  });
});

describe("call session: barge-in that pauses, then resumes or interrupts", () => {
  /** One reply of ten 100 ms sentences (5 frames each). */
  const tenSentences: DialogueProvider = {
    name: "ten",
    open: () => ({
      async *respond(): AsyncIterable<DialogueEvent> {
        for (let i = 1; i <= 10; i++) yield { type: "text", text: `${i === 1 ? "" : " "}Sentence ${i}.` };
      },
      truncateLastReply: () => {},
      ...keysAsText,
    }),
  };

  /** Caller asks, the agent answers; `over` is what the caller says 200 ms into the reply. */
  async function replyWithCallerOver(over: string, overMs: number) {
    const call = await startCall({ asr: plannedAsr(["tell me everything", over]), dialogue: tenSentences });
    await call.caller(400, 500);
    // The turn ends 500 ms into the silence; 200 ms into the reply the caller speaks over it.
    while (call.transport.agentFrames === 0) await call.caller(20);
    await call.caller(200);
    const beforeOver = call.transport.agentFrames;
    await call.caller(overMs, 500);
    const duringOver = call.transport.agentFrames - beforeOver;
    await call.caller(3000);
    await call.session.stop();
    return { call, duringOver };
  }

  it("pauses the agent at a backchannel's start and goes on from the same frame after it: nothing repeated, nothing lost", async () => {
    const { call, duringOver } = await replyWithCallerOver("okay", 200);
    // Speech starts after 60 ms of voiced frames: the agent is paused before the backchannel ends.
    expect(duringOver).toBeLessThanOrEqual(3);
    // Paused, not cut: the far end keeps what it has.
    expect(call.transport.clears).toBe(0);
    expect(call.transport.events.some((e) => e.type === "interruption")).toBe(false);
    // Every frame of the reply was sent once: 10 sentences x 5 frames.
    expect(call.transport.agentFrames).toBe(50);
    const agentLines = call.transcript().filter((l) => l.startsWith("agent:"));
    expect(agentLines).toEqual([`agent: ${Array.from({ length: 10 }, (_, i) => `Sentence ${i + 1}.`).join(" ")}`]);
    expect(call.summary()!.turns.map((t) => t.interrupted)).toEqual([false]);
  });

  it("adaptive: goes on soon after a backchannel or a noise, not after the longest wait", async () => {
    for (const over of ["mm hmm", ""]) {
      const call = await startCall({ asr: plannedAsr(["tell me everything", over]), dialogue: tenSentences }, { endpointingMode: "adaptive", endpointingMs: 1500 });
      await call.caller(400, 500);
      while (call.transport.agentFrames === 0) await call.caller(20);
      await call.caller(200);
      await call.caller(200, 500);
      const pausedAt = call.transport.agentFrames;
      // The wait after complete words (COMPLETE_WAIT_MS): the agent goes on well within 600 ms.
      await call.caller(600);
      expect(call.transport.agentFrames, `after "${over}"`).toBeGreaterThan(pausedAt + 5);
      await call.caller(3000);
      await call.session.stop();
      expect(call.transport.agentFrames).toBe(50);
    }
  });

  it("goes on after noise the recognizer finds no words in", async () => {
    const { call } = await replyWithCallerOver("", 200);
    expect(call.transport.agentFrames).toBe(50);
    expect(call.transport.events.some((e) => e.type === "interruption")).toBe(false);
  });

  it("turns the pause into an interruption when the caller goes on talking: the reply is cut where it paused", async () => {
    const { call } = await replyWithCallerOver("actually i have a question about my bill", 800);
    const interruption = call.transport.events.find((e) => e.type === "interruption");
    expect(call.summary()!.turns[0]!.interrupted).toBe(true);
    // What played before the pause (about 200 ms after the reply started, the pause 60 ms into
    // the caller's speech) is all that was heard: nothing went out while the agent was paused.
    expect(interruption).toMatchObject({ type: "interruption", turnId: 1 });
    expect((interruption as { playedMs: number }).playedMs).toBeLessThanOrEqual(300);
    // Each sentence's frames are its own: the transcript is cut at the frame where the agent paused.
    const played = (interruption as { playedMs: number }).playedMs / 20;
    const sentences = Array.from({ length: 10 }, (_, i) => `Sentence ${i + 1}.`);
    const heard = [...sentences.slice(0, Math.floor(played / 5)), ...(played % 5 >= 3 ? ["Sentence"] : [])].join(" ");
    expect(call.transcript()[1]).toBe(`agent: ${heard}`);
    expect(call.transcript()[2]).toBe("user: actually i have a question about my bill");
  });
});

describe("call session: the greeting", () => {
  it("says a greeting rendered ahead from the speech cache, sentence by sentence, without asking the TTS again", async () => {
    const tts = lengthyTts({});
    const greetingTts = new SpeechCache(tts);
    const agent = { firstMessage: "Hello {{customer_name}}. This is Acme Dental." };
    await greetingTts.prepare("openai-alloy", greetingSentences({ ...agent, metadata: {} }, { customer_name: "Ann" }), new AbortController().signal);
    expect(tts.asked).toEqual(["Hello Ann.", "This is Acme Dental."]);
    const clock = new FakeClock();
    const transport = new RecordingTransport();
    const session = new CallSession({
      callId: "call_test",
      agent: testAgent({ voiceId: "openai-alloy", ...agent }),
      context: { customer_name: "Ann" },
      transport,
      providers: { vad: energyVad, asr: plannedAsr([]), dialogue: plannedDialogue([]), tts, fallbackTts: recordingTts(FLITE_VOICES), greetingTts },
      recordingPath: null,
      maxDurationSec: 60,
      clock,
    });
    await session.start();
    for (let i = 0; i < 20; i++) {
      transport.emit("audio", { samples: new Int16Array(FRAME), sampleRate: RATE });
      await tick();
      clock.advance(20);
      await tick();
    }
    const summary = await session.stop();
    expect(tts.asked).toHaveLength(2);
    expect(summary.transcript).toMatchObject([{ role: "agent", content: "Hello Ann. This is Acme Dental." }]);
  });
});
