import { rm } from "node:fs/promises";
import { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../audio/audio-frame.js";
import type { CallEndReason, CallEvent, TranscriptSegment } from "../call-events.js";
import type { CallSummary } from "../call-session.js";
import type { LiveCall, LiveCallOptions } from "../live-call.js";
import { supervisorText } from "../supervisor-text.js";
import { NO_TOOLS } from "../tools.js";
import type { FromWorker, ToWorker } from "./session-protocol.js";
import { insertSegment } from "../transcript-order.js";

/** Where a remote call's messages go: its session worker. */
export interface SessionWorkerPort {
  post(message: ToWorker, transfer?: ArrayBuffer[]): void;
}

type CallMessage = Extract<FromWorker, { callId: string }>;

/**
 * A call running on a session worker, as the main thread holds it: it carries the transport's
 * events to the worker and the worker's audio and events back, runs the call's tools here (they
 * reach the database), and keeps the transcript so far. If the worker dies, the call ends
 * (`error`) with what it had: its duration and transcript so far, its recording lost.
 */
export class RemoteCall extends EventEmitter<{ event: (event: CallEvent) => void }> implements LiveCall {
  readonly ended: Promise<CallSummary>;
  private resolveEnded!: (summary: CallSummary) => void;
  private readonly transcript: TranscriptSegment[] = [];
  private readonly toolRuns = new Map<number, AbortController>();
  private readonly createdAt = performance.now();
  private starting: Promise<void> | undefined;
  private settleStart: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private over = false;
  private readonly unlisten: Array<() => void> = [];

  constructor(
    private readonly worker: SessionWorkerPort,
    private readonly options: LiveCallOptions,
  ) {
    super();
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    const { transport } = options;
    worker.post({
      type: "create",
      setup: {
        callId: options.callId,
        agent: options.agent,
        context: options.context,
        recordingPath: options.recordingPath,
        maxDurationSec: options.maxDurationSec,
        silenceTimeoutMs: options.silenceTimeoutMs,
        preRollMs: options.preRollMs,
        transport: { protocol: transport.protocol, inputSampleRate: transport.inputSampleRate, outputSampleRate: transport.outputSampleRate, closed: transport.closed, sendsDtmf: transport.sendDtmf !== undefined },
        tools: (options.tools ?? NO_TOOLS).definitions,
      },
    });
    // Listening from now: a hang-up before start() must reach the session, as it would locally.
    this.listen("hangup", (reason: string) => this.post({ type: "hangup", callId: options.callId, reason }));
  }

  get callId(): string {
    return this.options.callId;
  }

  start(): Promise<void> {
    // Ended before it started (hung up, stopped, its worker gone): there is nothing to start.
    if (this.over) this.starting ??= Promise.resolve();
    this.starting ??= new Promise<void>((resolve, reject) => {
      this.settleStart = { resolve, reject };
      const callId = this.options.callId;
      this.post({ type: "start", callId });
      this.listen("audio", (frame: AudioFrame) => {
        const { samples } = frame;
        // A frame that owns its whole buffer moves to the worker without a copy; a view into a
        // larger buffer (a socket's read buffer) is copied, never detached.
        const owned = samples.byteOffset === 0 && samples.byteLength === samples.buffer.byteLength && samples.buffer instanceof ArrayBuffer;
        this.post({ type: "audio", callId, samples, sampleRate: frame.sampleRate }, owned ? [samples.buffer as ArrayBuffer] : []);
      });
      this.listen("dtmf", (digit: string) => this.post({ type: "dtmf", callId, digit }));
      this.listen("mark", (name: string) => this.post({ type: "mark", callId, name }));
    });
    return this.starting;
  }

  stop(reason: CallEndReason = "stopped"): Promise<CallSummary> {
    this.post({ type: "stop", callId: this.options.callId, reason });
    return this.ended;
  }

  hangUpWith(line: string, reason: CallEndReason, withinMs: number): Promise<CallSummary> {
    this.post({ type: "hang_up_with", callId: this.options.callId, line, reason, withinMs });
    return this.ended;
  }

  /** Checked here (a RangeError is the caller's, at once), carried out on the worker; nothing is sent once the call is over. */
  say(text: string): void {
    this.post({ type: "supervise", callId: this.options.callId, action: "say", text: supervisorText(text) });
  }

  whisper(text: string): void {
    this.post({ type: "supervise", callId: this.options.callId, action: "whisper", text: supervisorText(text) });
  }

  takeOver(): void {
    this.post({ type: "take_over", callId: this.options.callId, on: true });
  }

  handBack(): void {
    this.post({ type: "take_over", callId: this.options.callId, on: false });
  }

  transcriptSoFar(): TranscriptSegment[] {
    return [...this.transcript];
  }

  /** A message of this call from its worker. */
  receive(message: CallMessage): void {
    const { transport } = this.options;
    switch (message.type) {
      case "audio_out":
        return transport.sendAudio({ samples: message.samples, sampleRate: message.sampleRate });
      case "clear":
        return transport.clearAudio();
      case "mark_out":
        return transport.sendMark(message.name);
      case "close_transport":
        return transport.close(message.reason);
      case "send_dtmf":
        void transport.sendDtmf!(message.digits).then(
          () => this.post({ type: "dtmf_sent", callId: this.options.callId, requestId: message.requestId, error: null }),
          (err: unknown) => this.post({ type: "dtmf_sent", callId: this.options.callId, requestId: message.requestId, error: (err as Error)?.message ?? String(err) }),
        );
        return;
      case "event":
        return this.onEvent(message.event);
      case "tool":
        return this.runTool(message.requestId, message.name, message.args);
      case "tool_abort":
        return this.toolRuns.get(message.requestId)?.abort();
      case "started": {
        if (message.error === null) return this.settleStarting(null);
        const error = new Error(message.error.message);
        error.name = message.error.name;
        return this.settleStarting(error);
      }
      case "ended":
        return this.end(message.summary);
    }
  }

  /**
   * The worker died: the call ends now with what is known here (`error`, its duration so far,
   * the transcript so far). Its recording is deleted: the dead worker cannot finish the file.
   */
  async workerDied(why: string): Promise<void> {
    if (this.over) return;
    const durationMs = Math.round(performance.now() - this.createdAt);
    this.onEvent({ type: "error", message: `the call's session worker stopped (${why})`, recovered: false });
    this.options.transport.close("error");
    this.settleStarting(new Error(`the call's session worker stopped (${why})`));
    // Gone before the call is stored: nobody may fetch a half file, and none is left on disk.
    if (this.options.recordingPath) await rm(this.options.recordingPath, { force: true }).catch(() => undefined);
    this.onEvent({ type: "ended", reason: "error", durationMs, transcript: [...this.transcript] });
    this.end({ reason: "error", durationMs, transcript: [...this.transcript], recording: null, turns: [], startedAt: 0, actions: [] });
  }

  private onEvent(event: CallEvent): void {
    if (event.type === "transcript") insertSegment(this.transcript, event.segment);
    this.options.transport.sendEvent(event);
    this.emit("event", event);
  }

  private runTool(requestId: number, name: string, args: Record<string, unknown>): void {
    const controller = new AbortController();
    this.toolRuns.set(requestId, controller);
    const callId = this.options.callId;
    (this.options.tools ?? NO_TOOLS).execute(name, args, controller.signal).then(
      (result) => this.post({ type: "tool_result", callId, requestId, result, error: null }),
      (err: unknown) => this.post({ type: "tool_result", callId, requestId, result: null, error: (err as Error)?.message ?? String(err) }),
    ).finally(() => this.toolRuns.delete(requestId));
  }

  /** Settles start() once: resolved, or rejected with `error`. */
  private settleStarting(error: Error | null): void {
    const settle = this.settleStart;
    this.settleStart = undefined;
    if (error) settle?.reject(error);
    else settle?.resolve();
  }

  private end(summary: CallSummary): void {
    if (this.over) return;
    this.over = true;
    // A start still waiting for the worker's answer is over with the call.
    this.settleStarting(null);
    for (const controller of this.toolRuns.values()) controller.abort();
    for (const unlisten of this.unlisten.splice(0)) unlisten();
    this.resolveEnded(summary);
  }

  private post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    if (!this.over) this.worker.post(message, transfer);
  }

  private listen<E extends "audio" | "dtmf" | "mark" | "hangup">(event: E, listener: (...args: any[]) => void): void {
    const { transport } = this.options;
    transport.on(event, listener);
    this.unlisten.push(() => transport.off(event, listener));
  }
}
