import { readFileSync, writeFileSync } from "node:fs";
import WebSocket from "ws";
import { bytesToPcm16, encodeWav, monoAt, parseWav, pcm16ToBytes } from "../../engine/index.js";
import { integer, parseOptions, required, UsageError } from "./args.js";
import { startAudioPlayer } from "./audio-player.js";

export { TALK_USAGE } from "./usage.js";

const RATE = 16000;
const FRAME = RATE / 50;

/** What a talk session heard, for --output and for tests. */
interface Heard {
  audio: Int16Array[];
  lastAudioAt: number;
}

function toMono16k(path: string): Int16Array {
  return monoAt(parseWav(readFileSync(path)), RATE);
}

/** `parley talk`: returns the exit code. */
export async function talk(argv: string[]): Promise<number> {
  const o = parseOptions(argv, {
    agent: { type: "string" },
    url: { type: "string" },
    key: { type: "string" },
    input: { type: "string" },
    output: { type: "string" },
    "wait-ms": { type: "string" },
  });
  const agentId = required(o, "agent");
  const key = o.key ?? process.env.PARLEY_API_KEY;
  if (!key) throw new UsageError("--key or PARLEY_API_KEY is required");
  const base = (o.url ?? "http://localhost:8080").replace(/\/+$/, "").replace(/^http/, "ws");
  const waitMs = integer(o["wait-ms"], "wait-ms", 0) ?? 2500;
  const input = o.input ? toMono16k(o.input) : undefined;

  const ws = new WebSocket(`${base}/media/ws?agent_id=${encodeURIComponent(agentId)}&sample_rate=${RATE}`, { headers: { authorization: `Bearer ${key}` } });
  const heard: Heard = { audio: [], lastAudioAt: 0 };
  const player = o.output ? undefined : startAudioPlayer(RATE);
  const started = Date.now();
  const clock = () => ((Date.now() - started) / 1000).toFixed(1).padStart(5);

  const opened = new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => reject(new UsageError(`the server refused the call (${res.statusCode}): ${body}`)));
    });
    ws.once("error", (err) => reject(new UsageError(`cannot connect to ${base}: ${err.message}`)));
  });
  const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
  ws.on("message", (data, isBinary) => {
    if (isBinary) {
      const samples = bytesToPcm16(new Uint8Array(data as Buffer));
      heard.audio.push(samples);
      heard.lastAudioAt = Date.now();
      player?.write(pcm16ToBytes(samples));
      return;
    }
    const m = JSON.parse(data.toString()) as Record<string, unknown>;
    if (m.type === "connected") process.stdout.write(`[${clock()}] connected: call ${String(m.call_id)}\n`);
    else if (m.type === "transcript") process.stdout.write(`[${clock()}] ${m.role === "agent" ? "agent" : "you  "}: ${String(m.content)}\n`);
    else if (m.type === "turn_metrics" && m.voice_to_voice_ms !== null) process.stdout.write(`[${clock()}]   (voice-to-voice ${String(m.voice_to_voice_ms)} ms)\n`);
    else if (m.type === "interruption") process.stdout.write(`[${clock()}]   (interrupted after ${String(m.played_ms)} ms)\n`);
    else if (m.type === "ended") process.stdout.write(`[${clock()}] call ended: ${String(m.reason)}\n`);
    else if (m.type === "error") process.stdout.write(`[${clock()}] the server refused the call (${String(m.code)}): ${String(m.message)}\n`);
  });
  await opened;

  if (input) await speakFile(ws, input, heard, waitMs);
  else await speakMicrophone(ws, closed);
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "hangup" }));
  ws.close();
  await closed;
  player?.end();
  if (o.output) {
    const total = heard.audio.reduce((n, a) => n + a.length, 0);
    const samples = new Int16Array(total);
    let at = 0;
    for (const a of heard.audio) {
      samples.set(a, at);
      at += a.length;
    }
    writeFileSync(o.output, encodeWav({ sampleRate: RATE, channels: 1, samples }));
    process.stdout.write(`wrote ${(total / RATE).toFixed(2)} s of agent audio to ${o.output}\n`);
  }
  return 0;
}

/** Streams the file in real time, then silence until the agent has answered and gone quiet. */
async function speakFile(ws: WebSocket, samples: Int16Array, heard: Heard, waitMs: number): Promise<void> {
  const frames: Int16Array[] = [];
  for (let i = 0; i < samples.length; i += FRAME) {
    const frame = new Int16Array(FRAME);
    frame.set(samples.subarray(i, Math.min(i + FRAME, samples.length)));
    frames.push(frame);
  }
  const silence = new Int16Array(FRAME);
  // Let a greeting finish first, so the file is not spoken over it.
  await untilQuiet(ws, heard, 0, waitMs, silence);
  const begin = Date.now();
  for (const [i, frame] of frames.entries()) {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(pcm16ToBytes(frame));
    await sleep(begin + (i + 1) * 20 - Date.now());
  }
  await untilQuiet(ws, heard, Date.now(), waitMs, silence);
}

/** Sends silence until agent audio has come after `since` and then stopped for `quietMs` (or nothing came at all). */
async function untilQuiet(ws: WebSocket, heard: Heard, since: number, quietMs: number, silence: Int16Array): Promise<void> {
  const begin = Date.now();
  for (let i = 0; ws.readyState === WebSocket.OPEN; i++) {
    const now = Date.now();
    const answered = heard.lastAudioAt > since;
    if (answered && now - heard.lastAudioAt >= quietMs) return;
    if (!answered && now - begin >= quietMs * 4) return;
    ws.send(pcm16ToBytes(silence));
    await sleep(begin + (i + 1) * 20 - Date.now());
  }
}

async function speakMicrophone(ws: WebSocket, closed: Promise<void>): Promise<void> {
  const { record } = await import("node-record-lpcm16");
  const recording = record({ sampleRate: RATE, channels: 1, audioType: "raw", recorder: "sox" });
  recording.stream().on("data", (chunk: Buffer) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(chunk);
  });
  process.stdout.write("talking: speak into your microphone, Ctrl-C to hang up\n");
  await Promise.race([closed, new Promise<void>((resolve) => process.once("SIGINT", () => resolve()))]);
  recording.stop();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
