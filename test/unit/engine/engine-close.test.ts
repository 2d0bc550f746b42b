import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createLocalEngine } from "../../../engine/engine.js";
import { testAgent } from "../../helpers/dialogue.js";

/** The festival processes this test process started (its direct children). */
function festivalChildren(): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(process.pid), "-x", "festival"], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe("LocalEngine.close", () => {
  it("ends the processes of every speech provider, not only Flite's workers", async () => {
    const engine = await createLocalEngine({ vad: "webrtc", asrRecognizers: 1, ttsWorkers: 2, tts: [{ provider: "festival" }] });
    try {
      // The greeting in a Festival voice starts a festival process.
      await engine.prepareGreeting(testAgent({ voiceId: "festival-kal", firstMessage: "Hello, this is Acme Dental." }), {}, new AbortController().signal);
      expect(festivalChildren()).toHaveLength(1);
    } finally {
      await engine.close();
    }
    await expect.poll(festivalChildren, { timeout: 5000 }).toEqual([]);
  }, 60_000);
});
