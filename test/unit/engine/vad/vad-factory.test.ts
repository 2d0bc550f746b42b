import { describe, expect, it } from "vitest";
import { createVadFactory, type VadName } from "../../../../engine/vad/vad-factory.js";
import { labelledSpeech, runVad, score } from "./labelled-speech.js";

describe("createVadFactory", () => {
  it("makes Silero streams by default", async () => {
    const factory = await createVadFactory();
    expect(factory.name).toBe("silero");
    const vad = factory.createVad(8000);
    expect(vad.name).toBe("silero");
    const audio = await labelledSpeech({ text: "Can I speak to a human, please?", sampleRate: 8000, voice: "kal" });
    const { speech, silence } = score(audio, await runVad(vad, audio.frames));
    expect(speech).toBeGreaterThanOrEqual(0.9);
    expect(silence).toBeGreaterThanOrEqual(0.98);
    await vad.close();
    await factory.close();
  });

  it("makes WebRTC streams with the configured mode", async () => {
    const audio = await labelledSpeech({ text: "Can I speak to a human, please?", sampleRate: 8000, voice: "kal", noiseDbfs: -30 });
    const silenceWithMode = async (webrtcMode: 0 | 3) => {
      const factory = await createVadFactory("webrtc", { webrtcMode });
      expect(factory.name).toBe("webrtc");
      const vad = factory.createVad(8000);
      expect(vad.name).toBe("webrtc");
      const { silence } = score(audio, await runVad(vad, audio.frames));
      await factory.close();
      return silence;
    };
    // Mode 0 calls -30 dBFS noise speech; mode 3 rejects it.
    expect(await silenceWithMode(3)).toBeGreaterThan((await silenceWithMode(0)) + 0.5);
  });

  it("refuses an unknown name, listing the known ones", async () => {
    await expect(createVadFactory("cobra" as VadName)).rejects.toThrow(/Unknown VAD "cobra": expected one of silero, webrtc/);
  });
});
