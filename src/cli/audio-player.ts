import { spawn } from "node:child_process";

/** Where `parley talk` plays the agent's audio: the speakers, through sox's `play`. */
export interface AudioPlayer {
  /** Queues 16-bit little-endian mono samples; dropped once the player has gone away. */
  write(bytes: Uint8Array): void;
  /** No more audio: `play` finishes what it has and exits (one that stopped reading is stopped). */
  end(): void;
  /** Settles once `play` has exited or could not start. */
  readonly exited: Promise<void>;
}

/**
 * Starts sox's `play` for raw 16-bit mono at `rate`. The call must not depend on it: a player
 * that is not installed (spawn's 'error'), exits before the end (no sound device, say) or stops
 * reading (EPIPE on its stdin, which unhandled would kill the process) is reported once on
 * stderr, written to no more, and the call goes on without sound.
 */
export function startAudioPlayer(rate: number): AudioPlayer {
  const child = spawn("play", ["-q", "-t", "raw", "-r", String(rate), "-e", "signed", "-b", "16", "-c", "1", "-"], {
    stdio: ["pipe", "ignore", "ignore"],
  });
  let gone = false;
  let ended = false;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.once("error", () => resolve());
  });
  const stopped = (why: string) => {
    if (gone) return;
    gone = true;
    process.stderr.write(`parley talk: the audio player (sox's play) stopped: ${why}; the call goes on without sound; use --output FILE to keep the audio\n`);
  };
  child.on("error", (err: NodeJS.ErrnoException) => stopped(err.code === "ENOENT" ? "it is not installed (no play on PATH)" : err.message));
  // Stays attached: a write already queued when the player went away fails later with EPIPE.
  child.stdin!.on("error", (err) => stopped(err.message));
  child.on("exit", (code, signal) => {
    if (!ended) stopped(signal ? `it was killed by ${signal}` : `it exited with status ${String(code)}`);
    gone = true;
  });
  return {
    write(bytes) {
      if (!gone) child.stdin!.write(bytes);
    },
    end() {
      ended = true;
      if (!gone) child.stdin!.end();
      // Stopped reading but still running: nothing left for it to do, and the command would wait for it.
      else if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) child.kill();
    },
    exited,
  };
}
