import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";
import { EventEmitter } from "eventemitter3";
import { packageRoot } from "../../../package-root.js";
import { AsrError } from "../asr-error.js";
import { encodeRequest, parseReply, REQUEST, type RecognizerReply } from "./recognizer-protocol.js";

/** Where `scripts/build-native.sh` puts the recognizer, relative to the package root. */
const BINARY_IN_PACKAGE = "dist/native/pocketsphinx-recognizer";

/** The built recognizer: found from this module's folder up to the package root (source or dist/). */
export function defaultRecognizerPath(): string {
  return path.join(packageRoot(), BINARY_IN_PACKAGE);
}

export interface RecognizerProcessConfig {
  binaryPath: string;
  /** Holds en-us/, en-us.lm.bin and cmudict-en-us.dict. */
  modelDir: string;
}

export interface RecognizerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The end of what the process wrote to stderr (it writes only errors). */
  stderr: string;
}

interface RecognizerEvents {
  reply: (reply: RecognizerReply) => void;
  exit: (exit: RecognizerExit) => void;
}

/** Keeps the end of stderr for error messages; the recognizer is quiet unless something failed. */
const STDERR_KEPT_CHARS = 2000;
/** How long `stop()` lets the process exit on its own before killing it. */
const STOP_GRACE_MS = 1000;

/**
 * One recognizer child process (dist/native/pocketsphinx-recognizer): it holds a loaded model
 * (~125 MB: the general decoder and the grammar decoder) and decodes one utterance at a time. Emits `reply` for each line it answers and
 * `exit` once when it ends for any reason; writes to a dead process are dropped (its `exit`
 * already told the owner).
 */
export class RecognizerProcess extends EventEmitter<RecognizerEvents> {
  private child: ChildProcessWithoutNullStreams | undefined;
  private exitInfo: RecognizerExit | undefined;
  private stderr = "";

  constructor(private readonly config: RecognizerProcessConfig) {
    super();
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.child !== undefined && this.exitInfo === undefined;
  }

  /** How the process ended; undefined while it runs. */
  get exit(): RecognizerExit | undefined {
    return this.exitInfo;
  }

  /** Spawns the process (before returning, so `stop()` right after reaches it); resolves once the model is loaded. */
  start(): Promise<void> {
    if (this.child) throw new Error("the recognizer process was started already");
    const { binaryPath, modelDir } = this.config;
    try {
      accessSync(binaryPath, constants.X_OK);
    } catch (cause) {
      const message = `the pocketsphinx recognizer is not built (${binaryPath}): run npm run setup, or bash scripts/build-native.sh`;
      return Promise.reject(new AsrError("recognizer_unavailable", message, { retryable: false, cause }));
    }
    const child = spawn(binaryPath, [modelDir], { stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    // EPIPE after the process died: its exit event reports that.
    child.stdin.on("error", () => {});
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_KEPT_CHARS);
    });
    this.readReplies(child);
    // 'close' rather than 'exit': the process's last replies and stderr have been read by then.
    child.on("close", (code, signal) => this.exited(code, signal));
    // Spawn failures come here, and 'close' may not follow.
    child.on("error", (error) => {
      this.stderr += `${error.message}\n`;
      this.exited(null, null);
    });

    return new Promise<void>((resolve, reject) => {
      const onReply = (reply: RecognizerReply) => {
        if (reply.type !== "ready") return;
        this.off("reply", onReply).off("exit", onExit);
        resolve();
      };
      const onExit = (exit: RecognizerExit) => {
        this.off("reply", onReply).off("exit", onExit);
        reject(new AsrError("recognizer_unavailable", `the pocketsphinx recognizer failed to load: ${describeExit(exit)}`, { retryable: false }));
      };
      this.on("reply", onReply).on("exit", onExit);
    });
  }

  /** Writes one request; resolves when the pipe can take more (backpressure), or at once if the process is gone. */
  async send(message: Buffer): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    if (child.stdin.write(message)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        child.stdin.off("drain", done);
        this.off("exit", done);
        resolve();
      };
      child.stdin.on("drain", done);
      this.on("exit", done);
    });
  }

  /** Asks the process to exit, kills it if it does not; resolves once it is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    const gone = new Promise<void>((resolve) => this.once("exit", () => resolve()));
    child.stdin.end(encodeRequest(REQUEST.shutdown));
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await gone;
    clearTimeout(timer);
  }

  private readReplies(child: ChildProcessWithoutNullStreams): void {
    let pending = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        let reply: RecognizerReply;
        try {
          reply = parseReply(line);
        } catch (error) {
          // A process that breaks the protocol cannot be trusted with the next utterance.
          this.stderr += `${(error as Error).message}\n`;
          child.kill("SIGKILL");
          return;
        }
        this.emit("reply", reply);
      }
    });
  }

  private exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal, stderr: this.stderr.trim() };
    this.emit("exit", this.exitInfo);
  }
}

/** "exit code 1: <stderr>", "killed by SIGKILL", ... for error messages. */
export function describeExit(exit: RecognizerExit): string {
  const how = exit.signal ? `killed by ${exit.signal}` : exit.code === null ? "could not run" : `exit code ${exit.code}`;
  return exit.stderr ? `${how}: ${exit.stderr}` : how;
}
