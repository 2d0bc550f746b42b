import { beforeAll, describe, expect, it } from "vitest";
import { WebRtcVadModule } from "../../../../engine/vad/webrtc-vad.js";
import { labelledSpeech, runVad, score } from "./labelled-speech.js";

const TEXT = "Hello, I would like to book an appointment for next Tuesday afternoon, please.";
const OTHER_TEXT = "My name is John Smith and I am calling about my order.";

let wasm: WebRtcVadModule;
beforeAll(async () => {
  wasm = await WebRtcVadModule.load();
});

describe("WebRTC VAD on speech padded with silence", () => {
  const cases = [
    { label: "16 kHz", sampleRate: 16000, voice: "slt" },
    { label: "8 kHz (kal voice)", sampleRate: 8000, voice: "kal" },
    { label: "8 kHz (16 kHz speech decimated)", sampleRate: 8000, voice: "slt" },
  ] as const;
  const noises = [{ label: "clean" }, { label: "white noise at -40 dBFS", noiseDbfs: -40 }] as const;

  for (const { label, sampleRate, voice } of cases) {
    for (const noise of noises) {
      it(`answers 1 in speech and 0 in silence: ${label}, ${noise.label}`, async () => {
        const audio = await labelledSpeech({ text: TEXT, sampleRate, voice, ...noise });
        const vad = wasm.createStream(sampleRate);
        const probabilities = await runVad(vad, audio.frames);
        await vad.close();
        expect(probabilities.every((p) => p === 0 || p === 1)).toBe(true);
        const { speech, silence } = score(audio, probabilities);
        expect(speech).toBeGreaterThanOrEqual(0.85);
        // Its noise estimate adapts over the first few frames, which it may call speech.
        expect(silence).toBeGreaterThanOrEqual(0.9);
      });
    }
  }

  it("lets the mode trade speech for noise rejection: mode 3 rejects noise that mode 0 calls speech", async () => {
    const audio = await labelledSpeech({ text: TEXT, sampleRate: 8000, voice: "kal", noiseDbfs: -30 });
    const permissive = score(audio, await runVad(wasm.createStream(8000, 0), audio.frames));
    const aggressive = score(audio, await runVad(wasm.createStream(8000, 3), audio.frames));
    expect(permissive.silence).toBeLessThan(0.5);
    expect(aggressive.silence).toBeGreaterThanOrEqual(0.9);
  });
});

describe("WebRTC VAD streams", () => {
  it("keep their own state: interleaved streams give what each gives alone", async () => {
    const first = await labelledSpeech({ text: TEXT, sampleRate: 16000, noiseDbfs: -40 });
    const second = await labelledSpeech({ text: OTHER_TEXT, sampleRate: 16000, voice: "rms" });
    const alone = [await runVad(wasm.createStream(16000), first.frames), await runVad(wasm.createStream(16000), second.frames)];

    const a = wasm.createStream(16000);
    const b = wasm.createStream(16000);
    const together: [number[], number[]] = [[], []];
    for (let i = 0; i < Math.max(first.frames.length, second.frames.length); i++) {
      const frameA = first.frames[i];
      const frameB = second.frames[i];
      const [pa, pb] = await Promise.all([frameA && a.process(frameA), frameB && b.process(frameB)]);
      if (pa !== undefined) together[0].push(pa);
      if (pb !== undefined) together[1].push(pb);
    }
    expect(together).toEqual(alone);
  });

  it("start afresh after reset(), keeping their rate and mode", async () => {
    const audio = await labelledSpeech({ text: TEXT, sampleRate: 16000, noiseDbfs: -30 });
    const fresh = await runVad(wasm.createStream(16000, 3), audio.frames);
    const vad = wasm.createStream(16000, 3);
    await runVad(vad, audio.frames.slice(0, 100));
    vad.reset();
    expect(await runVad(vad, audio.frames)).toEqual(fresh);
  });

  it("take 10, 20 and 30 ms frames and refuse other lengths", async () => {
    const vad = wasm.createStream(8000);
    for (const samples of [80, 160, 240]) {
      expect(await vad.process({ samples: new Int16Array(samples), sampleRate: 8000 })).toBe(0);
    }
    await expect(vad.process({ samples: new Int16Array(200), sampleRate: 8000 })).rejects.toThrow(
      /10, 20, 30 ms frames, got 200 samples at 8000 Hz/,
    );
  });

  it("refuse other sample rates and modes", async () => {
    expect(() => wasm.createStream(32000)).toThrow(/supports 8000 and 16000 Hz, not 32000 Hz/);
    expect(() => wasm.createStream(8000, 4 as never)).toThrow(/mode must be one of 0, 1, 2, 3, not 4/);
    const vad = wasm.createStream(8000);
    await expect(vad.process({ samples: new Int16Array(320), sampleRate: 16000 })).rejects.toThrow(
      /runs at 8000 Hz but got a 16000 Hz frame/,
    );
  });

  it("refuse frames after close()", async () => {
    const vad = wasm.createStream(16000);
    await vad.close();
    await expect(vad.process({ samples: new Int16Array(320), sampleRate: 16000 })).rejects.toThrow(/closed/);
  });
});
