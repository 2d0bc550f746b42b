import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/cli/args.js";
import { BENCH_ENDPOINTING_MODES, expectedIn, gapsOf, loadConversations } from "../../../scripts/bench/conversation.js";
import { joinLines } from "../../../scripts/bench/play-conversation.js";
import { endpointingFields, parseEndpointingModes, parseLevels } from "../../../scripts/bench/run-bench.js";
import { MediaClient, type SpokenAt } from "../../../scripts/bench/media-caller.js";

describe("--concurrency", () => {
  it("defaults to 1,2,4,8 calls (quick: 1,2) with the embedded engines and 10,50,100,200 (quick: 10) with the stand-ins", () => {
    expect(parseLevels(undefined, false, "embedded")).toEqual([1, 2, 4, 8]);
    expect(parseLevels(undefined, true, "embedded")).toEqual([1, 2]);
    expect(parseLevels(undefined, false, "standin")).toEqual([10, 50, 100, 200]);
    expect(parseLevels(undefined, true, "standin")).toEqual([10]);
  });

  it("takes a comma list of 1 to 200 calls, whatever --quick says", () => {
    expect(parseLevels("2", true, "embedded")).toEqual([2]);
    expect(parseLevels("1, 3", false, "standin")).toEqual([1, 3]);
    expect(() => parseLevels("201", false, "standin")).toThrow(/from 1 to 200/);
    expect(() => parseLevels("0", false, "embedded")).toThrow(UsageError);
  });
});

describe("--endpointing", () => {
  it("defaults to both modes, fixed first", () => {
    expect(parseEndpointingModes(undefined)).toEqual(["fixed", "adaptive"]);
    expect(BENCH_ENDPOINTING_MODES).toEqual(["fixed", "adaptive"]);
  });

  it("takes one mode or a comma list, in the order given", () => {
    expect(parseEndpointingModes("adaptive")).toEqual(["adaptive"]);
    expect(parseEndpointingModes("adaptive, fixed")).toEqual(["adaptive", "fixed"]);
  });

  it("refuses unknown, empty and repeated modes with a usage error", () => {
    expect(() => parseEndpointingModes("smart")).toThrow(UsageError);
    expect(() => parseEndpointingModes("fixed,smart")).toThrow(/not "smart"/);
    expect(() => parseEndpointingModes("")).toThrow(UsageError);
    expect(() => parseEndpointingModes("fixed,fixed")).toThrow(/twice/);
  });

  it("gives each mode's agents endpointing_ms 500 (fixed) or 1500 (adaptive)", () => {
    expect(endpointingFields("fixed")).toEqual({ endpointing_mode: "fixed", endpointing_ms: 500 });
    expect(endpointingFields("adaptive")).toEqual({ endpointing_mode: "adaptive", endpointing_ms: 1500 });
  });
});

describe("conversation gaps and expect_modes", () => {
  it("reads gaps_ms as one silence per pair of lines, and gap_ms as the same silence between every pair", () => {
    expect(gapsOf({ say: ["a", "b", "c"], gaps_ms: [600, 900] })).toEqual([600, 900]);
    expect(gapsOf({ say: ["a", "b", "c"], gap_ms: 250 })).toEqual([250, 250]);
    expect(gapsOf({ say: ["a", "b"] })).toEqual([0]);
    expect(gapsOf({ say: ["a"] })).toEqual([]);
  });

  it("refuses gaps_ms of the wrong length, negative gaps, and both gap fields at once", () => {
    expect(() => gapsOf({ say: ["a", "b", "c"], gaps_ms: [600] })).toThrow(/needs 2/);
    expect(() => gapsOf({ say: ["a", "b"], gaps_ms: [-1] })).toThrow(/gaps_ms/);
    expect(() => gapsOf({ say: ["a", "b"], gap_ms: 100, gaps_ms: [100] })).toThrow(/not both/);
  });

  function dirWith(conversation: object): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), "parley-conversations-"));
    writeFileSync(path.join(dir, "c.json"), JSON.stringify(conversation));
    return dir;
  }

  it("checks gaps_ms and expect_modes when conversations are loaded", () => {
    const base = { name: "c", expect: {}, steps: [{ say: ["a", "b"], gaps_ms: [700] }] };
    expect(loadConversations(dirWith(base))[0]).toMatchObject({ name: "c", quick: false, line_noise_rms: 0 });
    expect(() => loadConversations(dirWith({ ...base, steps: [{ say: ["a", "b"], gaps_ms: [1, 2] }] }))).toThrow(/c\.json: gaps_ms/);
    expect(() => loadConversations(dirWith({ ...base, expect_modes: ["smart"] }))).toThrow(/expect_modes: unknown smart/);
  });

  it("requires the outcome in every mode unless expect_modes names some", () => {
    expect(expectedIn({}, "fixed")).toBe(true);
    expect(expectedIn({ expect_modes: ["adaptive"] }, "fixed")).toBe(false);
    expect(expectedIn({ expect_modes: ["adaptive"] }, "adaptive")).toBe(true);
  });

  it("ships conversations that all load, with expect_modes where a mode splits the caller's turn by design", () => {
    const shipped = loadConversations(path.resolve(import.meta.dirname, "../../../fixtures/conversations"));
    const byName = new Map(shipped.map((c) => [c.name, c]));
    expect(byName.get("pause-mid-sentence")?.expect_modes).toEqual(["adaptive"]);
    expect(byName.get("hesitation")?.steps[0]).toMatchObject({ say: ["i-need-a", "um", "service-cleaning"], gaps_ms: [600, 900] });
    expect(byName.get("long-monologue")?.expect_modes).toEqual(["fixed"]);
    expect(byName.get("backchannels")?.expect.interrupted).toBe(false);
  });
});

describe("joinLines and MediaClient.speak marks", () => {
  it("joins lines with their gaps and marks each line's first and last sample", () => {
    const a = new Int16Array(320).fill(1);
    const b = new Int16Array(640).fill(2);
    const c = new Int16Array(160).fill(3);
    // 16 kHz: 20 ms = 320 samples, 10 ms = 160.
    const { speech, marks } = joinLines([a, b, c], [20, 10], 16000);
    expect(speech.length).toBe(320 + 320 + 640 + 160 + 160);
    expect(marks).toEqual([0, 319, 640, 1279, 1440, 1599]);
    expect([speech[319], speech[320], speech[639], speech[640], speech[1279], speech[1280], speech[1440]]).toEqual([1, 0, 0, 2, 2, 0, 3]);
  });

  /** A client whose frames are "sent" by the test, at made-up times: no socket, no clock. */
  class FakeClient extends MediaClient {
    constructor() {
      super({ on() {} } as never, 16000);
    }
    protected sendFrame(): void {}
    sendDtmf(): void {}
    hangUp(): void {}
    /** Sends every queued frame, the k-th at 1000 + 20 k ms. */
    flush(): void {
      const queue = (this as unknown as { queue: Array<{ onSent?: (at: number) => void }> }).queue;
      queue.forEach((frame, k) => frame.onSent?.(1000 + 20 * k));
    }
  }

  it("times each mark by the frame that holds it", async () => {
    const client = new FakeClient();
    const { speech, marks } = joinLines([new Int16Array(640).fill(1), new Int16Array(320).fill(2)], [40], 16000);
    const spoken: Promise<SpokenAt> = client.speak(speech, marks);
    client.flush();
    // Frames: line 1 in frames 0-1, silence in 2-3, line 2 in frame 4.
    expect(await spoken).toEqual({ startedAt: 1000, endedAt: 1080, marksAt: [1000, 1020, 1080, 1080] });
  });
});
