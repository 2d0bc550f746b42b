import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { CallEvent } from "../../../../engine/call-events.js";
import type { ToolExecutor } from "../../../../engine/tools.js";
import { RemoteCall } from "../../../../engine/workers/remote-call.js";
import type { ToWorker } from "../../../../engine/workers/session-protocol.js";
import { RecordingTransport } from "../../../helpers/call-session-harness.js";
import { testAgent } from "../../../helpers/dialogue.js";

/** What the call posted to its worker, with the buffers it asked to move. */
function fakeWorker() {
  const posted: Array<{ message: ToWorker; transfer: ArrayBuffer[] }> = [];
  return { posted, port: { post: (message: ToWorker, transfer: ArrayBuffer[] = []) => void posted.push({ message, transfer }) } };
}

function remoteCall(options: { tools?: ToolExecutor; recordingPath?: string | null } = {}) {
  const worker = fakeWorker();
  const transport = new RecordingTransport();
  const call = new RemoteCall(worker.port, {
    callId: "call_1",
    agent: testAgent(),
    context: {},
    transport,
    recordingPath: options.recordingPath ?? null,
    maxDurationSec: 60,
    tools: options.tools,
  });
  const events: CallEvent[] = [];
  call.on("event", (event) => events.push(event));
  return { call, transport, events, posted: worker.posted };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("RemoteCall (a call on a session worker, as the main thread holds it)", () => {
  it("moves a caller frame's buffer to the worker only when the frame owns it: a view into a larger buffer is copied, never detached", () => {
    const { call, transport, posted } = remoteCall();
    void call.start();
    const owned = new Int16Array(320);
    const socketBuffer = new ArrayBuffer(4096);
    const view = new Int16Array(socketBuffer, 640, 320);
    transport.emit("audio", { samples: owned, sampleRate: 16000 });
    transport.emit("audio", { samples: view, sampleRate: 16000 });
    const audio = posted.filter((p) => p.message.type === "audio");
    expect(audio.map((p) => p.transfer)).toEqual([[owned.buffer], []]);
    expect(socketBuffer.byteLength).toBe(4096);
  });

  it("tells the worker of a hang-up before start(), and of keys and marks after it", () => {
    const { call, transport, posted } = remoteCall();
    transport.emit("hangup", "gone");
    void call.start();
    transport.emit("dtmf", "5");
    transport.emit("mark", "turn-1");
    expect(posted.map((p) => p.message.type)).toEqual(["create", "hangup", "start", "dtmf", "mark"]);
  });

  it("runs the worker's tool calls here and posts their results, a thrown error as its message", async () => {
    const tools: ToolExecutor = {
      definitions: [{ name: "book", description: "books", parameters: {} }],
      execute: async (name, args) => {
        if (args.fail) throw new Error("database locked");
        return { ok: true, data: { name } };
      },
    };
    const { call, posted } = remoteCall({ tools });
    expect(posted[0]!.message).toMatchObject({ type: "create", setup: { tools: tools.definitions } });
    call.receive({ type: "tool", callId: "call_1", requestId: 1, name: "book", args: {} });
    call.receive({ type: "tool", callId: "call_1", requestId: 2, name: "book", args: { fail: true } });
    await settle();
    expect(posted.filter((p) => p.message.type === "tool_result").map((p) => p.message)).toEqual([
      { type: "tool_result", callId: "call_1", requestId: 1, result: { ok: true, data: { name: "book" } }, error: null },
      { type: "tool_result", callId: "call_1", requestId: 2, result: null, error: "database locked" },
    ]);
  });

  it("forwards the worker's events to the transport, keeps the transcript in the order said, and plays its audio", () => {
    const { call, transport, events } = remoteCall();
    call.receive({ type: "event", callId: "call_1", event: { type: "transcript", segment: { role: "agent", content: "Hello.", timestamp: 0 } } });
    call.receive({ type: "event", callId: "call_1", event: { type: "transcript", segment: { role: "user", content: "late words", timestamp: 3 } } });
    call.receive({ type: "event", callId: "call_1", event: { type: "transcript", segment: { role: "agent", content: "Anything else?", timestamp: 5 } } });
    call.receive({ type: "event", callId: "call_1", event: { type: "transcript", segment: { role: "user", content: "said before", timestamp: 4 } } });
    call.receive({ type: "audio_out", callId: "call_1", samples: new Int16Array(320), sampleRate: 16000 });
    expect(call.transcriptSoFar().map((s) => s.content)).toEqual(["Hello.", "late words", "said before", "Anything else?"]);
    expect(transport.events).toEqual(events);
    expect(transport.agentFrames).toBe(1);
  });

  it("ends with what it had when its worker dies: reason error, its transcript, its half recording deleted, the caller let go", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "remote-call-"));
    const recordingPath = path.join(dir, "call_1.wav");
    writeFileSync(recordingPath, "half a file");
    const { call, transport, events, posted } = remoteCall({ recordingPath });
    const starting = call.start().then(
      () => null,
      (err: Error) => err.message,
    );
    call.receive({ type: "event", callId: "call_1", event: { type: "transcript", segment: { role: "agent", content: "Hello.", timestamp: 0 } } });
    await call.workerDied("exit code 1");
    expect(await starting).toMatch(/session worker stopped \(exit code 1\)/);
    const summary = await call.ended;
    expect(summary).toMatchObject({ reason: "error", recording: null, transcript: [{ role: "agent", content: "Hello.", timestamp: 0 }] });
    expect(existsSync(recordingPath)).toBe(false);
    expect(transport.closedWith).toBe("error");
    expect(events.map((e) => e.type)).toEqual(["transcript", "error", "ended"]);
    // Nothing more goes to the dead worker, and a late message changes nothing.
    const count = posted.length;
    transport.emit("audio", { samples: new Int16Array(320), sampleRate: 16000 });
    void call.stop();
    call.receive({ type: "ended", callId: "call_1", summary: { ...summary, reason: "stopped" } });
    expect(posted.length).toBe(count);
    expect((await call.ended).reason).toBe("error");
  });

  it("settles start() when the call ends before the worker answers it, and at once when started after its end", async () => {
    const { call } = remoteCall();
    const starting = call.start();
    call.receive({ type: "ended", callId: "call_1", summary: { reason: "stopped", durationMs: 0, transcript: [], recording: null, turns: [], startedAt: 0, actions: [] } });
    await starting;
    const late = remoteCall();
    late.call.receive({ type: "ended", callId: "call_1", summary: { reason: "caller_hangup", durationMs: 0, transcript: [], recording: null, turns: [], startedAt: 0, actions: [] } });
    await late.call.start();
    expect(late.posted.map((p) => p.message.type)).toEqual(["create"]);
  });
});
