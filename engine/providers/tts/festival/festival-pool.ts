import type { AudioFrame } from "../../../audio/audio-frame.js";
import { FestivalError } from "./festival-error.js";
import { FestivalProcess } from "./festival-process.js";
import type { FestivalVoice } from "./festival-voices.js";

interface Job {
  voice: FestivalVoice;
  literal: string;
  signal: AbortSignal;
  resolve(audio: AudioFrame): void;
  reject(error: unknown): void;
}

/** What the pool is doing now. */
export interface FestivalPoolStats {
  /** Processes alive (speaking, idle or loading their voice). */
  processes: number;
  /** Processes saying a sentence now (including one whose caller gave up on it). */
  busy: number;
  /** Sentences waiting for a process. */
  queued: number;
}

/**
 * Festival processes, each with one voice loaded, started on first use of their voice (at most
 * `size` per voice) and kept warm. Sentences queue in arrival order; each goes to an idle
 * process of its voice. A process that dies fails its sentence and is dropped: the next
 * sentence of that voice starts a new one.
 */
export class FestivalPool {
  private readonly processes: FestivalProcess[] = [];
  private readonly queue: Job[] = [];
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly command = "festival",
    /** See DEFAULT_ANSWER_TIMEOUT_MS. */
    private readonly answerTimeoutMs?: number,
  ) {}

  /** One sentence (a Scheme string literal) in `voice`. Rejects with FestivalError, or with the abort reason. */
  say(voice: FestivalVoice, literal: string, signal: AbortSignal): Promise<AudioFrame> {
    if (this.closed) return Promise.reject(new FestivalError("the festival provider is closed", { retryable: false }));
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<AudioFrame>((resolve, reject) => {
      const job: Job = { voice, literal, signal, resolve, reject };
      this.queue.push(job);
      signal.addEventListener(
        "abort",
        () => {
          const at = this.queue.indexOf(job);
          if (at >= 0) {
            this.queue.splice(at, 1);
            reject(signal.reason);
          }
        },
        { once: true },
      );
      this.dispatch();
    });
  }

  /** Starts a process for `voice` now, if none is running, and waits until its voice is loaded. */
  async warmUp(voice: FestivalVoice): Promise<void> {
    const running = this.processes.find((p) => p.voice === voice && p.alive);
    await (running ?? this.spawn(voice)).ready;
  }

  stats(): FestivalPoolStats {
    const alive = this.processes.filter((p) => p.alive);
    return { processes: alive.length, busy: alive.filter((p) => p.busy).length, queued: this.queue.length };
  }

  /** Process ids of the live processes, of one voice or all (for operators and tests). */
  pids(voice?: FestivalVoice): number[] {
    return this.processes.filter((p) => p.alive && p.pid !== undefined && (!voice || p.voice === voice)).map((p) => p.pid!);
  }

  /** Ends every process; sentences queued or under way fail. */
  close(): void {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new FestivalError("the festival provider is closed", { retryable: false }));
    for (const process of this.processes.splice(0)) process.close();
  }

  private dispatch(): void {
    this.prune();
    for (let i = 0; i < this.queue.length; ) {
      const job = this.queue[i]!;
      const process = this.processes.find((p) => p.voice === job.voice && !p.busy) ?? (this.count(job.voice) < this.size ? this.spawn(job.voice) : undefined);
      if (!process) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      void this.run(process, job);
    }
  }

  private async run(process: FestivalProcess, job: Job): Promise<void> {
    try {
      job.resolve(await process.say(job.literal, job.signal));
    } catch (error) {
      job.reject(error);
    }
    // An aborted sentence settles at once: the process is free only once Festival has finished it.
    if (process.busy) await process.whenIdle();
    this.dispatch();
  }

  private spawn(voice: FestivalVoice): FestivalProcess {
    const process = new FestivalProcess(voice, this.command, this.answerTimeoutMs);
    this.processes.push(process);
    // A process that dies idle (or fails to load its voice) is dropped before the next sentence.
    process.ready.catch(() => this.prune());
    return process;
  }

  private count(voice: FestivalVoice): number {
    return this.processes.filter((p) => p.voice === voice).length;
  }

  private prune(): void {
    for (let i = this.processes.length - 1; i >= 0; i--) if (!this.processes[i]!.alive) this.processes.splice(i, 1);
  }
}
