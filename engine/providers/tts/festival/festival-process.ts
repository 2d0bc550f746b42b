import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { AudioFrame } from "../../../audio/audio-frame.js";
import { parseWav } from "../../../audio/wav.js";
import { FestivalError } from "./festival-error.js";
import type { FestivalVoice } from "./festival-voices.js";

/** Festival's last words on stderr kept for an error message (a SIOD error is a few lines). */
const STDERR_KEPT = 2000;

/**
 * Defines `parley.say`: synthesizes a string and writes, on stdout, `PARLEY-WAV <id>` and the
 * RIFF file, or `PARLEY-FAIL <id>` when synthesis raised a SIOD error (caught by
 * unwind-protect, so the process carries on); then flushes, since stdout is a pipe and Festival
 * would otherwise hold the end of the audio back. `Utterance` does not evaluate its arguments,
 * hence `eval` of a list holding the string.
 */
const SAY_DEFINITION = `(define (parley.say id text)
  (let ((u (unwind-protect (utt.synth (eval (list 'Utterance 'Text text))) nil)))
    (if u
      (begin (format t "\\nPARLEY-WAV %d\\n" id) (utt.save.wave u "-" 'riff))
      (format t "\\nPARLEY-FAIL %d\\n" id))
    (fflush nil)))`;

/**
 * How long a sentence may take before the process is taken as hung and stopped (the sentence
 * fails, retryably, and the pool starts another process for the next one). Generous: a long
 * sentence from a process still loading its voice, on a busy machine, takes a few seconds.
 */
export const DEFAULT_ANSWER_TIMEOUT_MS = 20_000;

const MARKER = /\nPARLEY-(WAV|FAIL|READY) (\S+)\n/;
/** Bytes kept while looking for a marker that may be split across reads. */
const MARKER_TAIL = 64;

interface Request {
  id: number;
  settle(result: { audio: AudioFrame } | { error: FestivalError }): void;
}

/**
 * One `festival --pipe` process with one voice loaded (loading costs most of a second; a
 * sentence then takes a small fraction of its duration). Requests are Scheme lines on stdin;
 * replies are framed on stdout by markers carrying the request's id, so output of a request
 * the caller gave up on is recognised and skipped. One sentence at a time: the pool queues.
 * The pipe was chosen over `festival --server`: no port, nothing listening, no access list to
 * get right, and the process dies with Parley (it reads EOF on stdin).
 */
export class FestivalProcess {
  readonly ready: Promise<void>;
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer: Buffer = Buffer.alloc(0);
  /** The WAV being read: its request id and the bytes it takes (known once its 8-byte RIFF head is in). */
  private wav: { id: string; bytes: number | undefined } | undefined;
  private current: Request | undefined;
  private idleWaiters: Array<() => void> = [];
  private nextId = 1;
  private stderr = "";
  private exited: FestivalError | undefined;
  private onReady!: () => void;
  private onReadyFailed!: (error: FestivalError) => void;

  constructor(
    readonly voice: FestivalVoice,
    command = "festival",
    private readonly answerTimeoutMs = DEFAULT_ANSWER_TIMEOUT_MS,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.onReady = resolve;
      this.onReadyFailed = reject;
    });
    this.ready.catch(() => undefined);
    this.child = spawn(command, ["--pipe"], { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (data: Buffer) => this.read(data));
    this.child.stderr.on("data", (data: Buffer) => {
      this.stderr = (this.stderr + data.toString("latin1")).slice(-STDERR_KEPT);
    });
    // EPIPE after the process died: its exit reports it.
    this.child.stdin.on("error", () => undefined);
    this.child.on("error", (error: NodeJS.ErrnoException) => {
      const missing = error.code === "ENOENT";
      this.died(new FestivalError(missing ? `festival is not installed (no "${command}" on PATH; Debian: apt-get install festival ${voice.package})` : `festival could not be started: ${error.message}`, { retryable: !missing, cause: error }));
    });
    this.child.on("exit", (code, signal) => {
      const said = this.lastError();
      this.died(new FestivalError(`festival (${voice.festivalName}) exited (${signal ?? `code ${code}`})${said ? `: ${said}` : ""}`, { retryable: true }));
    });
    // current-voice names the voice really loaded: Festival keeps its default when voice_… fails.
    this.child.stdin.write(`(voice_${voice.festivalName})\n${SAY_DEFINITION}\n(format t "\\nPARLEY-READY %s\\n" current-voice)(fflush nil)\n`);
    this.idle();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process is alive (it may still be loading its voice). */
  get alive(): boolean {
    return !this.exited;
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  /**
   * Says one sentence (a Scheme string literal, see toFestivalString): its audio at the rate
   * the RIFF header gives. Rejects with FestivalError, also when no answer comes within the
   * answer timeout (the process is then stopped). `signal` aborting settles the promise at
   * once; the process still finishes the sentence (the pool waits for `busy` to clear).
   */
  say(literal: string, signal: AbortSignal): Promise<AudioFrame> {
    if (this.exited) return Promise.reject(this.exited);
    if (this.current) return Promise.reject(new Error("FestivalProcess.say while a sentence is under way"));
    return new Promise<AudioFrame>((resolve, reject) => {
      let settled = false;
      const onAbort = () => finish({ error: signal.reason });
      const finish = (result: { audio: AudioFrame } | { error: unknown }) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        if ("audio" in result) resolve(result.audio);
        else reject(result.error);
      };
      const id = this.nextId++;
      const hung = setTimeout(() => {
        this.died(new FestivalError(`festival (${this.voice.festivalName}) did not answer a sentence within ${this.answerTimeoutMs / 1000} s; the process was stopped`, { retryable: true }));
        this.close();
      }, this.answerTimeoutMs);
      hung.unref();
      this.current = {
        id,
        settle: (result) => {
          clearTimeout(hung);
          this.current = undefined;
          this.idle();
          for (const wake of this.idleWaiters.splice(0)) wake();
          finish(result);
        },
      };
      this.busyNow();
      signal.addEventListener("abort", onAbort, { once: true });
      if (signal.aborted) onAbort();
      this.child.stdin.write(`(parley.say ${id} ${literal})\n`);
    });
  }

  /** Resolves once no sentence is under way (Festival has answered the last one, or died). */
  whenIdle(): Promise<void> {
    return this.current ? new Promise<void>((resolve) => this.idleWaiters.push(resolve)) : Promise.resolve();
  }

  /** Ends the process; a sentence under way fails. */
  close(): void {
    this.child.stdin.end();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }

  private read(data: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : data;
    for (;;) {
      if (this.wav) {
        if (this.wav.bytes === undefined) {
          if (this.buffer.length < 8) return;
          if (this.buffer.toString("latin1", 0, 4) !== "RIFF") {
            this.answer(this.wav.id, { error: new FestivalError("festival wrote something other than a WAV file after its marker", { retryable: true }) });
            this.wav = undefined;
            continue;
          }
          this.wav.bytes = 8 + this.buffer.readUInt32LE(4);
        }
        if (this.buffer.length < this.wav.bytes) return;
        const file = this.buffer.subarray(0, this.wav.bytes);
        this.buffer = this.buffer.subarray(this.wav.bytes);
        const id = this.wav.id;
        this.wav = undefined;
        this.answer(id, wavAudio(file));
        continue;
      }
      const text = this.buffer.toString("latin1");
      const marker = MARKER.exec(text);
      if (!marker) {
        // Anything else Festival prints is not ours; keep only what may begin a marker.
        if (this.buffer.length > MARKER_TAIL) this.buffer = this.buffer.subarray(this.buffer.length - MARKER_TAIL);
        return;
      }
      this.buffer = this.buffer.subarray(marker.index + marker[0].length);
      const [, kind, value] = marker;
      if (kind === "READY") this.readied(value!);
      else if (kind === "WAV") this.wav = { id: value!, bytes: undefined };
      else this.answer(value!, { error: new FestivalError(`festival could not synthesize the sentence${this.lastError() ? `: ${this.lastError()}` : ""}`, { retryable: false }) });
    }
  }

  private readied(loaded: string): void {
    if (loaded === this.voice.festivalName) {
      this.onReady();
      return;
    }
    const error = new FestivalError(`festival voice ${this.voice.festivalName} is not installed (festival kept ${loaded}; Debian: apt-get install ${this.voice.package})`, { retryable: false });
    this.onReadyFailed(error);
    this.exited = error;
    this.close();
  }

  /** A reply for request `id`: settles it if it is the one under way (a late reply to another is dropped). */
  private answer(id: string, result: { audio: AudioFrame } | { error: FestivalError }): void {
    if (this.current && String(this.current.id) === id) this.current.settle(result);
  }

  /** The process is gone (or unusable): the first reason stands, and the sentence under way fails with it. */
  private died(error: FestivalError): void {
    this.exited ??= error;
    this.onReadyFailed(this.exited);
    this.current?.settle({ error: this.exited });
  }

  private lastError(): string {
    const lines = this.stderr.trim().split("\n").filter((line) => line.trim());
    return lines.slice(-3).join(" ").replace(/\s+/g, " ").slice(0, 300);
  }

  /** An idle process does not keep Node running; one speaking does (its caller waits on it). */
  private idle(): void {
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) (stream as unknown as { unref?(): void }).unref?.();
  }

  private busyNow(): void {
    this.child.ref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) (stream as unknown as { ref?(): void }).ref?.();
  }
}

function wavAudio(file: Buffer): { audio: AudioFrame } | { error: FestivalError } {
  try {
    const wav = parseWav(file);
    if (wav.channels !== 1) return { error: new FestivalError(`festival wrote ${wav.channels}-channel audio; mono expected`, { retryable: false }) };
    // A copy: the samples would otherwise pin the whole stdout buffer they were cut from.
    return { audio: { samples: wav.samples.slice(), sampleRate: wav.sampleRate } };
  } catch (error) {
    return { error: new FestivalError(`festival wrote an unreadable WAV file: ${(error as Error).message}`, { retryable: true, cause: error }) };
  }
}
