import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startAudioPlayer, type AudioPlayer } from "../../../src/cli/audio-player.js";

const PATH = process.env.PATH;
const SOUND = new Uint8Array(640);
const LINE = /^parley talk: the audio player \(sox's play\) stopped: (.*); the call goes on without sound; use --output FILE to keep the audio$/;

afterEach(() => {
  process.env.PATH = PATH;
  vi.restoreAllMocks();
});

/** A `play` on PATH that runs `script` (sh). */
function fakePlay(script: string): void {
  const bin = mkdtempSync(path.join(os.tmpdir(), "parley-fake-play-"));
  writeFileSync(path.join(bin, "play"), `#!/bin/sh\n${script}\n`);
  chmodSync(path.join(bin, "play"), 0o755);
  process.env.PATH = `${bin}${path.delimiter}${PATH ?? ""}`;
}

/** What the player says on stderr, line by line. */
function stderrLines(): () => string[] {
  let text = "";
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((text += String(chunk)), true));
  return () => text.split("\n").filter((line) => line !== "");
}

/** Writes audio the way a call does, before and after the player went away, then ends it. */
async function playThrough(player: AudioPlayer): Promise<void> {
  for (let i = 0; i < 20; i++) player.write(SOUND);
  await player.exited;
  for (let i = 0; i < 20; i++) player.write(SOUND);
  player.end();
  // A write that failed late (EPIPE) reports on a later turn of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
}

describe("the audio player of parley talk", () => {
  it("says once that play is not installed, and takes writes without failing", async () => {
    process.env.PATH = mkdtempSync(path.join(os.tmpdir(), "parley-no-play-"));
    const lines = stderrLines();
    await playThrough(startAudioPlayer(16000));
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(LINE);
    expect(lines()[0]).toContain("not installed");
  });

  it("says once that play exited at once (no sound device)", async () => {
    fakePlay("exit 1");
    const lines = stderrLines();
    await playThrough(startAudioPlayer(16000));
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(LINE);
  });

  it("says once that play stopped reading (EPIPE while it still runs), without an unhandled error", async () => {
    // Its stdin closed, and running until stopped: an unhandled EPIPE would fail this file, and
    // end() must stop it (otherwise `parley talk` would wait for it after the call).
    fakePlay("exec 0<&-\nexec sleep 60");
    const lines = stderrLines();
    const player = startAudioPlayer(16000);
    await vi.waitFor(() => {
      player.write(SOUND);
      expect(lines()).toHaveLength(1);
    });
    expect(lines()[0]).toMatch(LINE);
    expect(lines()[0]).toContain("EPIPE");
    for (let i = 0; i < 20; i++) player.write(SOUND);
    player.end();
    await player.exited;
    expect(lines()).toHaveLength(1);
  });

  it("says nothing when play exits after the end of the audio", async () => {
    fakePlay("cat >/dev/null");
    const lines = stderrLines();
    const player = startAudioPlayer(16000);
    player.write(SOUND);
    player.end();
    await player.exited;
    expect(lines()).toEqual([]);
  });
});
