import { describe, expect, it } from "vitest";
import { engineVoices, remoteRecognizer } from "../../../engine/engine.js";
import { ProviderSettingsError } from "../../../engine/providers/provider-registry.js";

describe("the engine's providers, by configuration", () => {
  it("offer the voices of every configured TTS provider, each naming its provider, and Flite's always", () => {
    const voices = engineVoices({ tts: [{ provider: "elevenlabs", settings: { voices: "rachel=21m00Tcm4TlvDq8EAc40" } }, { provider: "openai", settings: { voices: "af_heart,am_adam" } }] });
    const byId = Object.fromEntries(voices.map((v) => [v.id, v.provider]));
    expect(byId).toMatchObject({ "elevenlabs-rachel": "elevenlabs", "openai-af_heart": "openai", "openai-am_adam": "openai", "flite-slt": "flite" });
    expect(Object.keys(byId).filter((id) => id.startsWith("elevenlabs-"))).toEqual(["elevenlabs-rachel"]);
    expect(engineVoices().every((v) => v.provider === "flite")).toBe(true);
  });

  it("refuse a provider's bad settings by name before creating anything", () => {
    expect(() => engineVoices({ tts: [{ provider: "elevenlabs", settings: { sampleRate: 44_100 } }] })).toThrow(ProviderSettingsError);
    expect(() => engineVoices({ tts: [{ provider: "nope" }] })).toThrow(/unknown tts provider "nope"; known: flite, festival, openai, elevenlabs/);
  });

  it("count a recognizer outside Parley as remote (the default capacity is higher then)", () => {
    expect(remoteRecognizer({})).toBe(false);
    expect(remoteRecognizer({ asr: [{ provider: "openai" }, { provider: "pocketsphinx" }] })).toBe(true);
    expect(remoteRecognizer({ asr: [{ provider: "pocketsphinx" }, { provider: "deepgram" }] })).toBe(false);
  });
});
