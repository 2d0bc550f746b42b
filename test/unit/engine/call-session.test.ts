import { EventEmitter } from "eventemitter3";
import { describe, expect, it } from "vitest";
import type { AudioFrame } from "../../../engine/audio/audio-frame.js";
import type { CallEvent } from "../../../engine/call-events.js";
import { CallSession, type CallSummary } from "../../../engine/call-session.js";
import type { AsrProvider, AsrResult } from "../../../engine/providers/asr/asr-provider.js";
import { createRulesDialogueProvider } from "../../../engine/providers/llm/rules/rules-dialogue-provider.js";
import type { TtsProvider } from "../../../engine/providers/tts/tts-provider.js";
import type { MediaTransport, TransportEvents } from "../../../engine/transports/transport.js";
import type { AgentSettings } from "../../../engine/types.js";
import type { VadFactory } from "../../../engine/vad/vad-factory.js";
import { testAgent } from "../../helpers/dialogue.js";
import { FakeClock } from "../../helpers/fake-clock.js";

const RATE = 16000;
const FRAME = RATE / 50;

/** A media connection that records what the session sends. */
class RecordingTransport extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol = "test";
  readonly inputSampleRate = RATE;
  readonly outputSampleRate = RATE;
  readonly events: CallEvent[] = [];
  agentFrames = 0;
  closedWith: string | null = null;

  sendAudio(): void {
    this.agentFrames += 1;
  }
  clearAudio(): void {}
  sendMark(): void {}
  sendEvent(event: CallEvent): void {
    this.events.push(event);
  }
  close(reason: string): void {
    this.closedWith = reason;
  }
}

/** Speech is any frame that is not silent. */
const energyVad: VadFactory = {
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
const levelTts: TtsProvider = {
  name: "level",
  voices: () => [],
  async *synthesize(text: AsyncIterable<string>): AsyncIterable<AudioFrame> {
    for await (const _ of text) yield { samples: new Int16Array(RATE / 10).fill(1000), sampleRate: RATE };
  },
};

function agent(metadata: Record<string, unknown>): AgentSettings {
  return testAgent({ systemPrompt: "You call patients of a dental practice.", transferMessage: "Please hold.", metadata });
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A call on a fake clock: the caller says one utterance (400 ms of speech, then silence) that
 * the recognizer reads as `heard`; the clock runs until the call ends.
 */
async function callWhereCallerSays(heard: string, metadata: Record<string, unknown> = {}) {
  const clock = new FakeClock();
  const transport = new RecordingTransport();
  const session = new CallSession({
    callId: "call_test",
    agent: agent(metadata),
    context: {},
    transport,
    providers: { vad: energyVad, asr: scriptedAsr([heard]), dialogue: createRulesDialogueProvider(), tts: levelTts },
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
