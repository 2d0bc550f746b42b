import { randomBytes } from "node:crypto";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import { decodeMulaw, encodeMulaw } from "../../../../engine/audio/mulaw.js";
import { OpusCodec } from "../../../../engine/audio/opus.js";
import { NativeTransport } from "../../../../engine/transports/websocket/native-transport.js";
import { TwilioTransport } from "../../../../engine/transports/websocket/twilio-transport.js";

let server: WebSocketServer | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

/** A loopback WebSocket pair: the server side handed to `accept`, the client returned. */
async function pair<T>(accept: (socket: WebSocket) => T): Promise<{ client: WebSocket; transport: Promise<T> }> {
  server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server!.once("listening", () => resolve()));
  const transport = new Promise<T>((resolve) => server!.once("connection", (socket) => resolve(accept(socket))));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await new Promise<void>((resolve) => client.once("open", () => resolve()));
  return { client, transport };
}

const sine = (n: number, rate: number) => Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)));
const nextMessage = (ws: WebSocket) => new Promise<{ data: Buffer; isBinary: boolean }>((resolve) => ws.once("message", (data, isBinary) => resolve({ data: data as Buffer, isBinary })));

describe("NativeTransport", () => {
  it("turns PCM16 of any length into 20 ms frames and sends frames, events and clear", async () => {
    const { client, transport } = await pair((s) => new NativeTransport(s, { format: "pcm16", sampleRate: 16000 }));
    const t = await transport;
    const frames: AudioFrame[] = [];
    t.on("audio", (f) => frames.push(f));
    const pcm = sine(800, 16000);
    client.send(Buffer.from(pcm.buffer, 0, 500 * 2));
    client.send(Buffer.from(pcm.buffer, 500 * 2));
    await new Promise((r) => setTimeout(r, 100));
    expect(frames.map((f) => f.samples.length)).toEqual([320, 320]);
    expect(Array.from(frames[1]!.samples.slice(0, 5))).toEqual(Array.from(pcm.slice(320, 325)));

    const binary = nextMessage(client);
    t.sendAudio({ samples: pcm.slice(0, 320), sampleRate: 16000 });
    expect((await binary).data.length).toBe(640);
    const clear = nextMessage(client);
    t.clearAudio();
    expect(JSON.parse((await clear).data.toString())).toEqual({ type: "clear" });
    const transcript = nextMessage(client);
    t.sendEvent({ type: "transcript", segment: { role: "user", content: "hi", timestamp: 1.5 } });
    expect(JSON.parse((await transcript).data.toString())).toEqual({ type: "transcript", role: "user", content: "hi", timestamp: 1.5 });
    expect(() => t.sendAudio({ samples: new Int16Array(160), sampleRate: 8000 })).toThrow(/16000/);
    client.close();
  });

  it("drops malformed frames (not JSON, unknown types, bad fields, odd-length PCM16) and goes on", async () => {
    const { client, transport } = await pair((s) => new NativeTransport(s, { format: "pcm16", sampleRate: 16000 }));
    const t = await transport;
    const seen: string[] = [];
    t.on("audio", () => seen.push("audio"));
    t.on("dtmf", (d) => seen.push(`dtmf ${d}`));
    t.on("mark", (m) => seen.push(`mark ${m}`));
    t.on("hangup", (r) => seen.push(`hangup ${r}`));
    for (const bad of ["not json", "[1,2]", "null", '{"type":"flood"}', '{"type":"dtmf","digit":"12"}', '{"type":"dtmf","digit":5}', '{"type":"mark"}', '{"kind":"hangup"}']) client.send(bad);
    client.send(Buffer.alloc(641)); // not a whole number of samples
    client.send(Buffer.alloc(1));
    client.send(JSON.stringify({ type: "dtmf", digit: "7" }));
    client.send(Buffer.from(sine(320, 16000).buffer));
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual(["dtmf 7", "audio"]);
    expect(t.closed).toBe(false);
    client.close();
  });

  it("drops an Opus packet the decoder refuses and goes on", async () => {
    const { client, transport } = await pair((s) => new NativeTransport(s, { format: "opus", sampleRate: 16000 }));
    const t = await transport;
    const frames: AudioFrame[] = [];
    t.on("audio", (f) => frames.push(f));
    client.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
    client.send(new OpusCodec(16000).encode(sine(320, 16000)));
    await new Promise((r) => setTimeout(r, 100));
    expect(frames).toHaveLength(1);
    client.close();
  });

  it("speaks Opus both ways, and reports DTMF, marks and hang-up", async () => {
    const { client, transport } = await pair((s) => new NativeTransport(s, { format: "opus", sampleRate: 16000 }));
    const t = await transport;
    const codec = new OpusCodec(16000);
    const frames: AudioFrame[] = [];
    const events: string[] = [];
    t.on("audio", (f) => frames.push(f));
    t.on("dtmf", (d) => events.push(`dtmf:${d}`));
    t.on("mark", (m) => events.push(`mark:${m}`));
    t.on("hangup", (r) => events.push(`hangup:${r}`));
    client.send(codec.encode(sine(320, 16000)));
    client.send(JSON.stringify({ type: "dtmf", digit: "7" }));
    client.send(JSON.stringify({ type: "dtmf", digit: "x" }));
    client.send(JSON.stringify({ type: "mark", name: "turn-1" }));
    const packet = nextMessage(client);
    t.sendAudio({ samples: sine(320, 16000), sampleRate: 16000 });
    expect(codec.decode((await packet).data).length).toBe(320);
    client.send(JSON.stringify({ type: "hangup" }));
    await new Promise((r) => setTimeout(r, 100));
    expect(frames).toHaveLength(1);
    expect(frames[0]!.samples.length).toBe(320);
    expect(events).toEqual(["dtmf:7", "mark:turn-1", "hangup:caller_hangup"]);
    client.close();
  });
});

describe("TwilioTransport", () => {
  const start = {
    event: "start",
    sequenceNumber: "1",
    streamSid: "MZ1",
    start: { streamSid: "MZ1", accountSid: "AC1", callSid: "CA1", tracks: ["inbound"], customParameters: { token: "mt_x", To: "+14155550100" }, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } },
  };

  it("reads start, media, dtmf, mark and stop; sends media, mark and clear with the stream id", async () => {
    const { client, transport } = await pair((s) => new TwilioTransport(s));
    const t = await transport;
    const frames: AudioFrame[] = [];
    const events: string[] = [];
    t.on("audio", (f) => frames.push(f));
    t.on("dtmf", (d) => events.push(`dtmf:${d}`));
    t.on("mark", (m) => events.push(`mark:${m}`));
    t.on("hangup", (r) => events.push(`hangup:${r}`));
    client.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
    client.send(JSON.stringify(start));
    const info = await t.waitForStart();
    expect(info.customParameters).toEqual({ token: "mt_x", To: "+14155550100" });

    const tone = sine(160, 8000);
    client.send(JSON.stringify({ event: "media", sequenceNumber: "2", streamSid: "MZ1", media: { track: "inbound", chunk: "1", timestamp: "0", payload: Buffer.from(encodeMulaw(tone)).toString("base64") } }));
    client.send(JSON.stringify({ event: "dtmf", sequenceNumber: "3", streamSid: "MZ1", dtmf: { track: "inbound_track", digit: "#" } }));
    client.send(JSON.stringify({ event: "mark", sequenceNumber: "4", streamSid: "MZ1", mark: { name: "turn-2" } }));

    const media = nextMessage(client);
    t.sendAudio({ samples: tone, sampleRate: 8000 });
    const sent = JSON.parse((await media).data.toString());
    expect(sent.event).toBe("media");
    expect(sent.streamSid).toBe("MZ1");
    expect(Array.from(decodeMulaw(Buffer.from(sent.media.payload, "base64")))).toEqual(Array.from(decodeMulaw(encodeMulaw(tone))));
    const clear = nextMessage(client);
    t.clearAudio();
    expect(JSON.parse((await clear).data.toString())).toEqual({ event: "clear", streamSid: "MZ1" });
    const mark = nextMessage(client);
    t.sendMark("turn-3");
    expect(JSON.parse((await mark).data.toString())).toEqual({ event: "mark", streamSid: "MZ1", mark: { name: "turn-3" } });

    client.send(JSON.stringify({ event: "stop", sequenceNumber: "5", streamSid: "MZ1", stop: { accountSid: "AC1", callSid: "CA1" } }));
    await new Promise((r) => setTimeout(r, 100));
    expect(frames).toHaveLength(1);
    expect(Array.from(frames[0]!.samples)).toEqual(Array.from(decodeMulaw(encodeMulaw(tone))));
    expect(events).toEqual(["dtmf:#", "mark:turn-2", "hangup:caller_hangup"]);
    client.close();
  });

  it("drops malformed frames instead of failing", async () => {
    const { client, transport } = await pair((s) => new TwilioTransport(s));
    const t = await transport;
    const frames: AudioFrame[] = [];
    t.on("audio", (f) => frames.push(f));
    for (const bad of ["not json", "[1,2]", '{"event":"media"}', '{"event":"media","media":{"payload":5}}', '{"event":"start"}', '{"event":"dtmf","dtmf":{}}']) client.send(bad);
    client.send(JSON.stringify(start));
    await t.waitForStart();
    // After the start too: unknown events, binary frames, and payloads that are not clean base64
    // (Node would decode "AAAA*AAAA" leniently into loud audio) are all dropped.
    client.send(JSON.stringify({ event: "flood", data: "x".repeat(1000) }));
    client.send(randomBytes(320));
    for (const payload of ["AAAA*".repeat(40), "AAA", "AA==AAAA", "A".repeat(161)]) {
      client.send(JSON.stringify({ event: "media", sequenceNumber: "2", streamSid: "MZ1", media: { track: "inbound", chunk: "1", timestamp: "0", payload } }));
    }
    client.send(JSON.stringify({ event: "media", sequenceNumber: "2", streamSid: "MZ1", media: { track: "inbound", chunk: "1", timestamp: "0", payload: Buffer.from(encodeMulaw(sine(160, 8000))).toString("base64") } }));
    await new Promise((r) => setTimeout(r, 100));
    expect(frames).toHaveLength(1);
    client.close();
  });

  it("rejects waitForStart when the stream closes first", async () => {
    const { client, transport } = await pair((s) => new TwilioTransport(s));
    const t = await transport;
    client.close();
    await expect(t.waitForStart()).rejects.toThrow(/before its start/);
  });
});

describe("a client that does not read what it is sent", () => {
  /** A raw TCP client that completes the WebSocket handshake and then never reads. */
  async function stalledClient<T>(accept: (socket: WebSocket) => T): Promise<{ socket: WebSocket; transport: T; raw: net.Socket }> {
    server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((resolve) => server!.once("listening", () => resolve()));
    const accepted = new Promise<{ socket: WebSocket; transport: T }>((resolve) => server!.once("connection", (socket) => resolve({ socket, transport: accept(socket) })));
    const raw = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
    raw.write(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    raw.pause();
    return { ...(await accepted), raw };
  }

  it.each<[string, (s: WebSocket) => NativeTransport | TwilioTransport, number]>([
    ["native, PCM16 at 48 kHz", (s) => new NativeTransport(s, { format: "pcm16", sampleRate: 48000 }), 48000],
    ["twilio", (s) => new TwilioTransport(s), 8000],
  ])("%s: agent audio is dropped once 2 s of it waits unsent, and a client that stays stalled is cut off", async (_, make, rate) => {
    const { socket, transport, raw } = await stalledClient(make);
    const hangups: string[] = [];
    transport.on("hangup", (reason) => hangups.push(reason));
    // 20 minutes of agent audio at once: far more than the kernel's socket buffers take.
    const frame = { samples: sine(rate / 50, rate), sampleRate: rate };
    for (let i = 0; i < 60_000; i++) transport.sendAudio(frame);
    const wireBytesPerSecond = rate === 48000 ? 48000 * 2 : 50 * 350;
    expect(socket.bufferedAmount).toBeLessThanOrEqual(2 * wireBytesPerSecond + 4096);
    expect(transport.closed).toBe(false);
    // Control messages still go out, up to a hard bound: past it the client is cut off.
    for (let i = 0; i < 2000 && !transport.closed; i++) transport.sendMark(`mark-${i}-${"x".repeat(1000)}`);
    expect(transport.closed).toBe(true);
    expect(hangups).toEqual(["client_not_reading"]);
    expect(socket.bufferedAmount).toBeLessThanOrEqual(1024 * 1024 + 4096);
    raw.destroy();
  });

  it.each<[string, (s: WebSocket) => NativeTransport | TwilioTransport]>([
    ["native", (s) => new NativeTransport(s, { format: "pcm16", sampleRate: 16000 })],
    ["twilio", (s) => new TwilioTransport(s)],
  ])("%s: a client that leaves a ping unanswered past the read timeout is cut off (client_not_reading), whatever the kernel buffers took", async (_, make) => {
    const { socket, transport, raw } = await stalledClient(make);
    const hangups: string[] = [];
    transport.on("hangup", (reason) => hangups.push(reason));
    const destroyed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    transport.watchReading(200);
    // Agent audio keeps flowing meanwhile: not enough to fill anything (one frame every 20 ms).
    const frame = { samples: sine(transport.outputSampleRate / 50, transport.outputSampleRate), sampleRate: transport.outputSampleRate };
    const speaking = setInterval(() => transport.sendAudio(frame), 20);
    await destroyed;
    clearInterval(speaking);
    expect(hangups).toEqual(["client_not_reading"]);
    expect(transport.closed).toBe(true);
    raw.destroy();
  });

  it("a client that reads (and so answers pings) is not cut off", async () => {
    const { client, transport } = await pair((s) => new NativeTransport(s, { format: "pcm16", sampleRate: 16000 }));
    const t = await transport;
    const hangups: string[] = [];
    t.on("hangup", (reason) => hangups.push(reason));
    let pings = 0;
    client.on("ping", () => pings++);
    t.watchReading(100);
    // Ten read timeouts' worth.
    await new Promise((r) => setTimeout(r, 1000));
    expect(pings).toBeGreaterThan(3);
    expect(hangups).toEqual([]);
    expect(t.closed).toBe(false);
    t.close("done");
    client.close();
  });
});
