/**
 * A session worker: one thread that runs calls with its own providers (see
 * SessionWorkerPool). Its calls' transports and tools stay on the main thread; they reach it
 * as messages (session-protocol.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import type { CallSession } from "../call-session.js";
import { createLocalEngine, type EngineOptions, type LocalEngine } from "../engine.js";
import type { ToolExecutor, ToolResult } from "../tools.js";
import type { CallSetup, FromWorker, ToWorker } from "./session-protocol.js";
import { MessageBatch } from "./message-batch.js";
import { WorkerTransport } from "./worker-transport.js";

/** How often the worker tells the main thread what its pools are doing. */
const USAGE_INTERVAL_MS = 1000;

interface WorkerCall {
  session: CallSession;
  transport: WorkerTransport;
  tools: Map<number, { resolve: (result: ToolResult) => void; reject: (error: unknown) => void }>;
}

const port = parentPort!;
const batch = new MessageBatch<FromWorker>((messages, transfer) => port.postMessage(messages, transfer));
const post = (message: FromWorker) => batch.post(message);
const calls = new Map<string, WorkerCall>();
const greetings = new Map<number, AbortController>();
let nextToolRequest = 0;

const engine: LocalEngine | undefined = await createLocalEngine({
  ...(workerData as { options: EngineOptions }).options,
  onProviderRetry: (retry) => post({ type: "provider_retry", ...retry }),
  onProviderSwitch: (change) => post({ type: "provider_switch", ...change }),
  onProviderRequest: (request) => post({ type: "provider_request", ...request }),
}).catch((err: unknown) => {
  post({ type: "failed_to_load", message: err instanceof Error ? err.message : String(err) });
  return undefined;
});

if (engine) {
  const usage = setInterval(() => post({ type: "usage", usage: engine.usage() }), USAGE_INTERVAL_MS);
  usage.unref();
  port.on("message", (messages: ToWorker[]) => {
    for (const message of messages) {
      try {
        handle(engine, message);
      } catch (err) {
        // One call's fault (a setting its session cannot run with) ends that call, not the worker's others.
        failCall("callId" in message ? message.callId : undefined, err);
      }
    }
  });
  // As in the main process: a promise nobody awaited is reported and the calls go on.
  process.on("unhandledRejection", (reason: unknown) => console.error("session worker: unhandled promise rejection (the worker goes on):", reason));
  post({ type: "usage", usage: engine.usage() });
  post({ type: "ready" });
} else {
  batch.flush();
  port.close();
}

function handle(engine: LocalEngine, message: ToWorker): void {
  if (message.type === "create") return create(engine, message.setup);
  if (message.type === "prepare_greeting") {
    const controller = new AbortController();
    greetings.set(message.requestId, controller);
    void engine
      .prepareGreeting(message.agent, message.context, controller.signal)
      .catch(() => undefined)
      .finally(() => {
        greetings.delete(message.requestId);
        post({ type: "greeting_prepared", requestId: message.requestId });
      });
    return;
  }
  if (message.type === "cancel_greeting") return greetings.get(message.requestId)?.abort();
  if (message.type === "close") return void close(engine);
  const call = calls.get(message.callId);
  if (!call) return;
  switch (message.type) {
    case "start":
      call.session.start().then(
        () => post({ type: "started", callId: message.callId, error: null }),
        (err: unknown) => post({ type: "started", callId: message.callId, error: { name: (err as Error)?.name ?? "Error", message: (err as Error)?.message ?? String(err) } }),
      );
      return;
    case "audio":
      return void call.transport.emit("audio", { samples: message.samples, sampleRate: message.sampleRate });
    case "dtmf":
      return void call.transport.emit("dtmf", message.digit);
    case "mark":
      return void call.transport.emit("mark", message.name);
    case "hangup":
      return call.transport.hungUp(message.reason);
    case "stop":
      return void call.session.stop(message.reason);
    case "hang_up_with":
      return void call.session.hangUpWith(message.line, message.reason, message.withinMs);
    case "supervise":
      return message.action === "say" ? call.session.say(message.text) : call.session.whisper(message.text);
    case "take_over":
      return message.on ? call.session.takeOver() : call.session.handBack();
    case "dtmf_sent":
      return call.transport.dtmfSent(message.requestId, message.error);
    case "tool_result": {
      const pending = call.tools.get(message.requestId);
      call.tools.delete(message.requestId);
      if (message.result) pending?.resolve(message.result);
      else pending?.reject(new Error(message.error ?? "the tool failed"));
      return;
    }
  }
}

/** Ends `callId` (created or not) with reason `error`, telling the main thread why. */
function failCall(callId: string | undefined, err: unknown): void {
  if (callId === undefined) return;
  const message = err instanceof Error ? err.message : String(err);
  const call = calls.get(callId);
  if (call) {
    post({ type: "event", callId, event: { type: "error", message, recovered: false } });
    void call.session.stop("error");
    return;
  }
  post({ type: "event", callId, event: { type: "error", message, recovered: false } });
  post({ type: "ended", callId, summary: { reason: "error", durationMs: 0, transcript: [], recording: null, turns: [], startedAt: 0, actions: [] } });
}

function create(engine: LocalEngine, setup: CallSetup): void {
  const { callId } = setup;
  const transport = new WorkerTransport(callId, setup.transport, post);
  const pending: WorkerCall["tools"] = new Map();
  const tools: ToolExecutor = {
    definitions: setup.tools,
    execute: (name, args, signal) =>
      new Promise<ToolResult>((resolve, reject) => {
        const requestId = ++nextToolRequest;
        pending.set(requestId, { resolve, reject });
        post({ type: "tool", callId, requestId, name, args });
        signal.addEventListener(
          "abort",
          () => {
            if (!pending.delete(requestId)) return;
            post({ type: "tool_abort", callId, requestId });
            reject(signal.reason);
          },
          { once: true },
        );
      }),
  };
  const session = engine.createCall({
    callId,
    agent: setup.agent,
    context: setup.context,
    transport,
    recordingPath: setup.recordingPath,
    maxDurationSec: setup.maxDurationSec,
    silenceTimeoutMs: setup.silenceTimeoutMs,
    preRollMs: setup.preRollMs,
    tools,
  });
  calls.set(callId, { session, transport, tools: pending });
  session.on("event", (event) => post({ type: "event", callId, event }));
  void session.ended.then((summary) => {
    calls.delete(callId);
    post({ type: "ended", callId, summary });
  });
}

async function close(engine: LocalEngine): Promise<void> {
  for (const controller of greetings.values()) controller.abort();
  await Promise.allSettled([...calls.values()].map(({ session }) => session.stop("stopped")));
  await engine.close();
  post({ type: "closed" });
  batch.flush();
  port.close();
}
