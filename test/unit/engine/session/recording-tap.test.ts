import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { withFileSizeLimit } from "../../../helpers/file-size-limit.js";
import { sessionOn } from "../../../helpers/call-session-harness.js";

describe("call session: a full disk loses the recording, not the call", () => {
  it("a recording file that cannot even be created (its path is /dev/full: ENOSPC) leaves the call going, unrecorded", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "parley-session-"));
    try {
      const file = path.join(dir, "call.wav");
      symlinkSync("/dev/full", file);
      const call = sessionOn({ recordingPath: file });
      await call.session.start();
      await call.run(3000);
      expect(call.summary()).toBeUndefined();
      const summary = await call.session.stop("caller_hangup");
      expect(summary.reason).toBe("caller_hangup");
      expect(summary.recording).toBeNull();
      expect(summary.transcript.map((s) => s.content)).toEqual(["Hello."]);
      expect(call.transport.events.filter((e) => e.type === "recording_failed")).toEqual([{ type: "recording_failed", message: expect.stringContaining("ENOSPC"), code: "ENOSPC" }]);
      expect(call.transport.events.filter((e) => e.type === "error" || e.type === "recording")).toEqual([]);
      // Nothing is left where the recording was to go.
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a write that fails during the call (EFBIG past the file size limit) stops the recording, deletes its file, and the call goes on to its end", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "parley-session-"));
    try {
      const file = path.join(dir, "call.wav");
      const summary = await withFileSizeLimit(16 * 1024, async () => {
        const call = sessionOn({ recordingPath: file });
        await call.session.start();
        // 3 s of stereo 16 kHz audio is ~190 KB: the limit is passed a quarter of a second in.
        await call.run(3000);
        expect(call.summary()).toBeUndefined();
        const ended = await call.session.stop("caller_hangup");
        expect(call.transport.events.filter((e) => e.type === "recording_failed")).toEqual([{ type: "recording_failed", message: expect.any(String), code: "EFBIG" }]);
        expect(call.transport.closedWith).toBe("caller_hangup");
        return ended;
      });
      expect(summary.reason).toBe("caller_hangup");
      expect(summary.durationMs).toBeGreaterThanOrEqual(3000);
      expect(summary.recording).toBeNull();
      expect(summary.transcript.map((s) => s.content)).toEqual(["Hello."]);
      expect(existsSync(file)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
