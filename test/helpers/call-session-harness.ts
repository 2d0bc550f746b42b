import { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../../engine/audio/audio-frame.js";
import type { CallEvent } from "../../engine/call-events.js";
import { CallSession, type CallProviders, type CallSessionOptions, type CallSummary } from "../../engine/call-session.js";
import type { AsrProvider, AsrResult } from "../../engine/providers/asr/asr-provider.js";
import type { DialogueProvider, DialogueEvent, DialogueSession } from "../../engine/providers/llm/dialogue-provider.js";
import { ChatCompletionsError } from "../../engine/providers/llm/openai/chat-completions-error.js";
import { createRulesDialogueProvider } from "../../engine/providers/llm/rules/rules-dialogue-provider.js";
import { FLITE_VOICES } from "../../engine/providers/tts/flite/flite-voices.js";
import type { TtsProvider } from "../../engine/providers/tts/tts-provider.js";
import type { MediaTransport, TransportEvents } from "../../engine/transports/transport.js";
import type { AgentSettings } from "../../engine/types.js";
import type { VadFactory } from "../../engine/vad/vad-factory.js";
import { testAgent } from "./dialogue.js";
import { FakeClock } from "./fake-clock.js";

/**
 * Call sessions for engine tests: a fake clock, a transport that records what the session
 * sends, and scripted providers (a VAD that hears any non-silent frame, recognizers and
 * dialogues that follow a plan, TTSs that say each piece as 100 ms of a level). `startCall`
 * drives a call utterance by utterance, `sessionOn` frame by frame.
 */

export const RATE = 16000;
export const FRAME = RATE / 50;

/** A media connection that records what the session sends. */
export class RecordingTransport extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol = "test";
  readonly inputSampleRate = RATE;
  readonly outputSampleRate = RATE;
  readonly events: CallEvent[] = [];
  agentFrames = 0;
  clears = 0;
  closedWith: string | null = null;
  /** Set by a test for a connection that went before the session started. */
  farEndGone = false;

  get closed(): boolean {
    return this.farEndGone || this.closedWith !== null;
  }

  sendAudio(): void {
    this.agentFrames += 1;
  }
  clearAudio(): void {
    this.clears += 1;
  }
  sendMark(): void {}
  sendEvent(event: CallEvent): void {
    this.events.push(event);
  }
  close(reason: string): void {
    this.closedWith = reason;
  }
}

/** Speech is any frame that is not silent. */
export const energyVad: VadFactory = {
  name: "webrtc",
  createVad: () => ({
    name: "energy",
    sampleRates: [RATE],
    process: async (frame: AudioFrame) => (frame.samples.some((s) => s !== 0) ? 1 : 0),
    reset: () => {},
    close: async () => {},
  }),
  close: async () => {},
};

/** "Recognises" each caller utterance as the next of `texts`. */
function scriptedAsr(texts: string[]): AsrProvider {
  return {
    name: "scripted",
    open: async () => ({
      async *transcribe(audio: AsyncIterable<AudioFrame>): AsyncIterable<AsrResult> {
        for await (const _ of audio);
        yield { type: "final", text: texts.shift() ?? "" };
      },
      close: async () => {},
    }),
  };
}

/** 100 ms of a constant level per sentence. */
export const levelTts: TtsProvider = {
  name: "level",
  voices: () => [],
  async *synthesize(text: AsyncIterable<string>) {
    let piece = 0;
    for await (const _ of text) yield { samples: new Int16Array(RATE / 10).fill(1000), sampleRate: RATE, piece: piece++ };
  },
};

/** 100 ms of a constant level per piece of text; notes what it said and in which voice. */
export function recordingTts(voices: TtsProvider["voices"] extends () => infer V ? V : never, fail?: (text: string) => Error | undefined) {
  const said: Array<{ text: string; voiceId: string }> = [];
  const tts: TtsProvider = {
    name: "recording",
    voices: () => voices,
    async *synthesize(text, options) {
      for await (const piece of text) {
        const error = fail?.(piece);
        if (error) throw error;
        said.push({ text: piece, voiceId: options.voiceId });
        yield { samples: new Int16Array(RATE / 10).fill(1000), sampleRate: RATE };
      }
    },
  };
  return Object.assign(tts, { said });
}

function agent(metadata: Record<string, unknown>): AgentSettings {
  return testAgent({ systemPrompt: "You call patients of a dental practice.", transferMessage: "Please hold.", metadata });
}

export const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Test dialogues take keys as the text they spell. */
export const keysAsText = {
  respondToKeys(this: DialogueSession, keys: string, signal: AbortSignal) {
    return this.respond(keys, signal);
  },
};

/**
 * A call on a fake clock: the caller says one utterance (400 ms of speech, then silence) that
 * the recognizer reads as `heard`; the clock runs until the call ends.
 */
export async function callWhereCallerSays(heard: string, metadata: Record<string, unknown> = {}) {
  const clock = new FakeClock();
  const transport = new RecordingTransport();
  const session = new CallSession({
    callId: "call_test",
    agent: agent(metadata),
    context: {},
    transport,
    providers: { vad: energyVad, asr: scriptedAsr([heard]), dialogue: createRulesDialogueProvider(), tts: levelTts, fallbackTts: recordingTts(FLITE_VOICES) },
    recordingPath: null,
    maxDurationSec: 60,
    clock,
  });
  let summary: CallSummary | undefined;
  void session.ended.then((s) => (summary = s));
  await session.start();
  for (let i = 0; i < 20; i++) transport.emit("audio", { samples: new Int16Array(FRAME).fill(500), sampleRate: RATE });
  for (let i = 0; i < 500 && !summary; i++) {
    transport.emit("audio", { samples: new Int16Array(FRAME), sampleRate: RATE });
    await tick();
    clock.advance(20);
    await tick();
  }
  if (!summary) throw new Error("the call did not end");
  return { summary, transport };
}

/** A dialogue whose turns go as `plan` says, in order: a reply "Reply <n>.", or the error thrown. */
export function plannedDialogue(plan: Array<"ok" | Error>): DialogueProvider {
  let turn = 0;
  return {
    name: "planned",
    open: () => ({
      async *respond(): AsyncIterable<DialogueEvent> {
        const step = plan[turn++] ?? "ok";
        if (step !== "ok") throw step;
        yield { type: "text", text: `Reply ${turn}.` };
      },
      truncateLastReply: () => {},
        ...keysAsText,
    }),
  };
}

/** Each utterance is recognised as the next of `results`, or fails with it. */
export function plannedAsr(results: Array<string | Error>): AsrProvider {
  return {
    name: "planned",
    open: async () => ({
      async *transcribe(audio: AsyncIterable<AudioFrame>): AsyncIterable<AsrResult> {
        for await (const _ of audio);
        const result = results.shift() ?? "";
        if (typeof result !== "string") throw result;
        yield { type: "final", text: result };
      },
      close: async () => {},
    }),
  };
}

export const unavailable = () => new ChatCompletionsError("http_status", "chat completions request failed with HTTP 503", { status: 503, retryable: true });

/** A call on a fake clock that the test drives utterance by utterance. */
export async function startCall(providers: Partial<CallProviders>, settings: Partial<AgentSettings> = {}, options: Pick<CallSessionOptions, "silenceTimeoutMs" | "tools"> = {}) {
  const clock = new FakeClock();
  const transport = new RecordingTransport();
  const fallbackTts = recordingTts(FLITE_VOICES);
  const session = new CallSession({
    callId: "call_test",
    agent: testAgent({ voiceId: "openai-alloy", ...settings }),
    context: {},
    transport,
    providers: { vad: energyVad, asr: plannedAsr([]), dialogue: plannedDialogue([]), tts: levelTts, fallbackTts, ...providers },
    recordingPath: null,
    maxDurationSec: 600,
    clock,
    ...options,
  });
  let summary: CallSummary | undefined;
  void session.ended.then((s) => (summary = s));
  const agentLines = () => transport.events.filter((e) => e.type === "transcript" && e.segment.role === "agent").length;
  const lastState = () => transport.events.findLast((e) => e.type === "state");
  /** Silence until the agent has said `lines` lines in all and listens again, or the call ended. */
  const untilAgentLines = async (lines: number) => {
    for (let i = 0; i < 500 && !summary && !(agentLines() >= lines && lastState()?.type === "state" && lastState()?.state === "listening"); i++) {
      transport.emit("audio", { samples: new Int16Array(FRAME), sampleRate: RATE });
      await tick();
      clock.advance(20);
      await tick();
    }
  };
  await session.start();
  return {
    session,
    transport,
    clock,
    fallbackTts,
    summary: () => summary,
    untilAgentLines,
    /** `ms` of caller audio, 20 ms at a time (voiced or silent), the clock keeping pace; stops when the call ends. */
    caller: async (ms: number, level = 0) => {
      for (let t = 0; t < ms && !summary; t += 20) {
        transport.emit("audio", { samples: new Int16Array(FRAME).fill(level), sampleRate: RATE });
        await tick();
        clock.advance(20);
        await tick();
      }
    },
    /** The caller speaks 400 ms, then waits until the agent has answered (its next line). */
    say: async () => {
      const before = agentLines();
      for (let i = 0; i < 20; i++) transport.emit("audio", { samples: new Int16Array(FRAME).fill(500), sampleRate: RATE });
      await untilAgentLines(before + 1);
    },
    transcript: () => transport.events.flatMap((e) => (e.type === "transcript" ? [`${e.segment.role}: ${e.segment.content}`] : [])),
    errors: () => transport.events.flatMap((e) => (e.type === "error" ? [e.recovered] : [])),
  };
}

/** A session on a fake clock with a greeting and no scripted caller, for tests that drive the caller frame by frame. */
export function sessionOn(options: { recordingPath?: string | null; vad?: VadFactory } = {}) {
  const clock = new FakeClock();
  const transport = new RecordingTransport();
  const session = new CallSession({
    callId: "call_test",
    agent: testAgent({ firstMessage: "Hello." }),
    context: {},
    transport,
    providers: { vad: options.vad ?? energyVad, asr: plannedAsr([]), dialogue: plannedDialogue([]), tts: levelTts, fallbackTts: recordingTts(FLITE_VOICES) },
    recordingPath: options.recordingPath ?? null,
    maxDurationSec: 600,
    clock,
  });
  let summary: CallSummary | undefined;
  void session.ended.then((s) => (summary = s));
  return {
    session,
    clock,
    transport,
    summary: () => summary,
    /** Runs the clock in 20 ms steps, sending `framesPerStep` silent caller frames each step, until the call ends or `ms` have passed. */
    run: async (ms: number, framesPerStep = 1) => {
      for (let t = 0; t < ms && !summary; t += 20) {
        for (let i = 0; i < framesPerStep; i++) transport.emit("audio", { samples: new Int16Array(FRAME), sampleRate: RATE });
        await tick();
        clock.advance(20);
        await tick();
      }
    },
  };
}

/** 100 ms of audio per piece of text, except those in `lengths` (ms); notes what it was asked to say. */
export function lengthyTts(lengths: Record<string, number>) {
  const asked: string[] = [];
  const tts: TtsProvider = {
    name: "lengthy",
    voices: () => [],
    async *synthesize(text) {
      let index = 0;
      for await (const piece of text) {
        asked.push(piece);
        yield { samples: new Int16Array(((lengths[piece] ?? 100) * RATE) / 1000).fill(1000), sampleRate: RATE, piece: index++ };
      }
    },
  };
  return Object.assign(tts, { asked });
}
