import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import { packageRoot } from "../../../engine/index.js";
import { parseWav, rms, type AudioFrame, type CallEvent, type MediaTransport, type TransportEvents } from "../../../engine/index.js";

const RATE = 8000;
const FRAME = RATE / 50;
/** Agent audio louder than this (RMS, PCM16) is speech. */
const SPEECH_RMS = 300;
/** The callee speaks once the agent has been quiet this long after speaking. */
const TURN_GAP_MS = 800;
/** However the call goes, the callee hangs up after this long. */
const MAX_CALL_MS = 90_000;

/** What the simulated callee says, one fixture line (fixtures/audio/<line>.8k.wav) per agent turn. */
export const CALLEE_SCRIPT = ["opening-hours", "goodbye"] as const;

/**
 * The far end of a simulated call, as a MediaTransport at 8 kHz (a phone line): it sends
 * 20 ms frames in real time (silence, or a fixture line), listens to the agent, says its next
 * line each time the agent has finished a turn, and hangs up after its last line has been
 * answered (or when the agent ends the call). It runs the real engine against scripted speech.
 */
export class SimulatedCallee extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol = "simulator";
  readonly inputSampleRate = RATE;
  readonly outputSampleRate = RATE;
  /** Transfers the agent asked for (the simulator records the hand-off). */
  readonly transfers: Array<string | null> = [];
  private readonly lines: Int16Array[];
  private speech: Int16Array | null = null;
  private speechAt = 0;
  private lineIndex = 0;
  private agentSpoke = false;
  private lastAgentSpeech = 0;
  private startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private nextFrameAt = 0;
  /** Hung up, or closed by the call. */
  private ended = false;

  /**
   * `script`: the lines it says; `hangUpAfterMs`: it hangs up this long after answering
   * whatever is said (0: at once, a callee who picks up and puts the phone down).
   */
  constructor(
    script: readonly string[] = CALLEE_SCRIPT,
    private readonly hangUpAfterMs = MAX_CALL_MS,
  ) {
    super();
    this.lines = script.map(loadLine);
  }

  /** Starts the line: frames flow from now on. */
  start(): void {
    this.startedAt = Date.now();
    this.nextFrameAt = this.startedAt;
    this.tick();
  }

  get closed(): boolean {
    return this.ended;
  }

  sendAudio(frame: AudioFrame): void {
    if (rms(frame.samples) * 32768 > SPEECH_RMS) {
      this.agentSpoke = true;
      this.lastAgentSpeech = Date.now();
    }
  }

  clearAudio(): void {}

  sendMark(name: string): void {
    queueMicrotask(() => this.emit("mark", name));
  }

  sendEvent(event: CallEvent): void {
    if (event.type === "transfer") this.transfers.push(event.number);
  }

  close(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private tick(): void {
    if (this.ended) return;
    const now = Date.now();
    while (this.nextFrameAt <= now) {
      this.emit("audio", { samples: this.nextFrame(), sampleRate: RATE });
      this.nextFrameAt += 20;
    }
    if (this.ended) return;
    const agentDone = this.agentSpoke && now - this.lastAgentSpeech >= TURN_GAP_MS && this.speech === null;
    if (agentDone && this.lineIndex < this.lines.length) {
      this.speech = this.lines[this.lineIndex++]!;
      this.speechAt = 0;
      this.agentSpoke = false;
    } else if ((agentDone && this.lineIndex >= this.lines.length) || now - this.startedAt >= this.hangUpAfterMs) {
      this.close();
      this.emit("hangup", "callee_hangup");
      return;
    }
    this.timer = setTimeout(() => this.tick(), Math.max(1, this.nextFrameAt - Date.now()));
  }

  private nextFrame(): Int16Array {
    const frame = new Int16Array(FRAME);
    if (this.speech) {
      frame.set(this.speech.subarray(this.speechAt, this.speechAt + FRAME));
      this.speechAt += FRAME;
      if (this.speechAt >= this.speech.length) this.speech = null;
    }
    return frame;
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
