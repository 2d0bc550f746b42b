import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { packageRoot, parseWav } from "../../../engine/index.js";
import { ScriptedCaller, type ScriptedCallerOptions } from "./scripted-caller.js";

const RATE = 8000;
/** However the call goes, the callee hangs up after this long. */
const MAX_CALL_MS = 90_000;

/** What the simulated callee says, one fixture line (fixtures/audio/<line>.8k.wav) per agent turn. */
export const CALLEE_SCRIPT = ["opening-hours", "goodbye"] as const;

/**
 * The far end of a simulated call: a ScriptedCaller whose lines are fixture recordings. It
 * says its next line each time the agent has finished a turn, and hangs up after its last
 * line has been answered (or when the agent ends the call). It runs the real engine against
 * scripted speech.
 */
export class SimulatedCallee extends ScriptedCaller {
  /**
   * `script`: the lines it says; `hangUpAfterMs`: it hangs up this long after answering
   * at the latest, whatever is said (0: at once, a callee who picks up and puts the phone down); `options`:
   * the rest of ScriptedCaller's (pauses, barge-in, noise, clock).
   */
  constructor(
    script: readonly string[] = CALLEE_SCRIPT,
    hangUpAfterMs = MAX_CALL_MS,
    options: Omit<ScriptedCallerOptions, "lines" | "maxCallMs"> = {},
  ) {
    super({ ...options, lines: script.map(loadLine), maxCallMs: hangUpAfterMs });
  }
}

/** Whether fixtures/audio has this line at 8 kHz. */
export function hasFixtureLine(name: string): boolean {
  return /^[a-z0-9-]+$/.test(name) && existsSync(path.join(fixturesDir(), "audio", `${name}.8k.wav`));
}

function loadLine(name: string): Int16Array {
  const file = path.join(fixturesDir(), "audio", `${name}.8k.wav`);
  const wav = parseWav(readFileSync(file));
  if (wav.sampleRate !== RATE || wav.channels !== 1) throw new Error(`${file}: expected 8 kHz mono`);
  return wav.samples;
}

/** fixtures/ at the package root, from src/ (tests) or dist/src/ (built). */
function fixturesDir(): string {
  return path.join(packageRoot(import.meta.url), "fixtures");
}
