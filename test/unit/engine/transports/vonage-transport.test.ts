import { randomBytes } from "node:crypto";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import { VonageTransport } from "../../../../engine/transports/websocket/vonage-transport.js";

let server: WebSocketServer | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

/** A loopback pair: the server side wrapped in a VonageTransport, the client playing Vonage's media server. */
async function pair(): Promise<{ client: WebSocket; t: VonageTransport; seen: string[]; frames: AudioFrame[] }> {
  server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server!.once("listening", () => resolve()));
  const accepted = new Promise<VonageTransport>((resolve) => server!.once("connection", (socket) => resolve(new VonageTransport(socket))));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await new Promise<void>((resolve) => client.once("open", () => resolve()));
  const t = await accepted;
  const seen: string[] = [];
  const frames: AudioFrame[] = [];
  t.on("audio", (f) => (frames.push(f), seen.push("audio")));
  t.on("dtmf", (d) => seen.push(`dtmf:${d}`));
  t.on("mark", (m) => seen.push(`mark:${m}`));
  t.on("hangup", (r) => seen.push(`hangup:${r}`));
  return { client, t, seen, frames };
}

const connected = (contentType: string, headers: Record<string, unknown> = {}) => JSON.stringify({ event: "websocket:connected", "content-type": contentType, ...headers });
const sine = (n: number, rate: number) => Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)));
const bytes = (samples: Int16Array) => Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
const nextMessage = (ws: WebSocket) => new Promise<{ data: Buffer; isBinary: boolean }>((resolve) => ws.once("message", (data, isBinary) => resolve({ data: data as Buffer, isBinary })));
/** Messages are handled in order: once this DTMF is reported, everything sent before it has been. */
function settle(client: WebSocket, t: VonageTransport): Promise<void> {
  const done = new Promise<void>((resolve) => t.on("dtmf", (d) => d === "D" && resolve()));
  client.send(JSON.stringify({ event: "websocket:dtmf", digit: "D", duration: 100 }));
  return done;
}
/** The client hangs up; resolves once the transport has reported it (after every earlier message). */
function hangUp(client: WebSocket, t: VonageTransport): Promise<string> {
  const done = new Promise<string>((resolve) => t.once("hangup", resolve));
  const gone = new Promise((resolve) => client.once("close", resolve));
  client.close();
  return Promise.all([done, gone]).then(([reason]) => reason);
}

describe("VonageTransport", () => {
  it("reads websocket:connected at 16 kHz, carries binary L16 both ways, clear, notify marks, DTMF and the hang-up", async () => {
    const { client, t, seen, frames } = await pair();
    expect(t.protocol).toBe("vonage");
    client.send(connected("audio/l16;rate=16000", { token: "cst_abc", call_uuid: "63f61863-4a51-4f6b-86e1-46edebcf9356", count: 3, nested: { a: 1 } }));
    const info = await t.waitForStart();
    expect(info).toEqual({ contentType: "audio/l16;rate=16000", sampleRate: 16000, headers: { token: "cst_abc", call_uuid: "63f61863-4a51-4f6b-86e1-46edebcf9356" } });
    expect([t.inputSampleRate, t.outputSampleRate]).toEqual([16000, 16000]);

    // Caller audio: 640-byte binary messages, and a frame split over two messages.
    const tone = sine(960, 16000);
    client.send(bytes(tone.subarray(0, 320)));
    client.send(bytes(tone.subarray(320, 480)));
    client.send(bytes(tone.subarray(480, 640)));
    client.send(bytes(tone.subarray(640, 960)));
    client.send(JSON.stringify({ event: "websocket:dtmf", digit: "5", duration: 260 }));
    client.send(JSON.stringify({ event: "websocket:cleared" }));
    client.send(JSON.stringify({ event: "websocket:notify", payload: { name: "turn-1" } }));
    await settle(client, t);
    expect(frames.map((f) => [f.samples.length, f.sampleRate])).toEqual([
      [320, 16000],
      [320, 16000],
      [320, 16000],
    ]);
    expect(Array.from(frames[1]!.samples)).toEqual(Array.from(tone.subarray(320, 640)));
    expect(seen).toEqual(["audio", "audio", "audio", "dtmf:5", "mark:turn-1", "dtmf:D"]);

    // Agent audio: binary little-endian L16, byte for byte.
    const sent = nextMessage(client);
    t.sendAudio({ samples: tone.slice(0, 320), sampleRate: 16000 });
    const audio = await sent;
    expect(audio.isBinary).toBe(true);
    expect(audio.data.equals(bytes(tone.subarray(0, 320)))).toBe(true);
    expect(audio.data.readInt16LE(2)).toBe(tone[1]);
    expect(() => t.sendAudio({ samples: new Int16Array(160), sampleRate: 8000 })).toThrow(/16000 Hz/);

    const clear = nextMessage(client);
    t.clearAudio();
    const clearMessage = await clear;
    expect(clearMessage.isBinary).toBe(false);
    expect(JSON.parse(clearMessage.data.toString())).toEqual({ action: "clear" });
    const notify = nextMessage(client);
    t.sendMark("turn-2");
    expect(JSON.parse((await notify).data.toString())).toEqual({ action: "notify", payload: { name: "turn-2" } });

    expect(t.closed).toBe(false);
    expect(await hangUp(client, t)).toBe("caller_hangup");
    expect(t.closed).toBe(true);
  });

  it("reads an 8 kHz stream (content-type spelt loosely) and keeps its audio at 8 kHz", async () => {
    const { client, t, frames } = await pair();
    expect(t.inputSampleRate).toBe(16000); // what Parley asks for, until the stream says
    client.send(connected("audio/L16; rate=8000", { token: "cst_8k" }));
    const info = await t.waitForStart();
    expect(info.sampleRate).toBe(8000);
    expect(info.headers).toEqual({ token: "cst_8k" });
    expect([t.inputSampleRate, t.outputSampleRate]).toEqual([8000, 8000]);

    const tone = sine(160, 8000);
    client.send(bytes(tone));
    client.send(Buffer.alloc(640)); // 40 ms at 8 kHz: more than one message carries
    await settle(client, t);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.sampleRate).toBe(8000);
    expect(Array.from(frames[0]!.samples)).toEqual(Array.from(tone));

    const sent = nextMessage(client);
    t.sendAudio({ samples: tone, sampleRate: 8000 });
    expect((await sent).data.length).toBe(320);
    expect(() => t.sendAudio({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(/8000 Hz/);
    client.close();
  });

  it("drops odd-length, oversized and empty audio messages and malformed control messages, and goes on", async () => {
    const { client, t, seen, frames } = await pair();
    client.send(connected("audio/l16;rate=16000"));
    await t.waitForStart();
    client.send(Buffer.alloc(641)); // not whole samples
    client.send(Buffer.alloc(1));
    client.send(Buffer.alloc(642)); // more than 20 ms
    client.send(Buffer.alloc(64_000));
    client.send(Buffer.alloc(0));
    for (const bad of [
      "not json",
      "[1,2]",
      "null",
      '{"event":"websocket:dtmf","digit":"12"}',
      '{"event":"websocket:dtmf","digit":5}',
      '{"event":"websocket:dtmf"}',
      '{"event":"websocket:notify"}',
      '{"event":"websocket:notify","payload":"turn-1"}',
      '{"event":"websocket:notify","payload":{"name":7}}',
      JSON.stringify({ event: "websocket:notify", payload: { name: "x".repeat(257) } }),
      connected("audio/l16;rate=8000"), // a second connected changes nothing
      '{"event":"websocket:error","message":"x"}',
    ]) {
      client.send(bad);
    }
    client.send(Buffer.from(sine(320, 16000).buffer));
    await settle(client, t);
    expect(seen).toEqual(["audio", "dtmf:D"]);
    expect(frames[0]!.sampleRate).toBe(16000);
    expect(t.inputSampleRate).toBe(16000);
    expect(t.closed).toBe(false);
    client.close();
  });

  const headers33 = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`h${i}`, "v"]));
  it.each([
    ["a binary first message", Buffer.alloc(640), /not websocket:connected/],
    ["text that is not JSON", "hello", /not websocket:connected/],
    ["another event first", JSON.stringify({ event: "websocket:dtmf", digit: "1" }), /not websocket:connected/],
    ["no content-type", JSON.stringify({ event: "websocket:connected", token: "cst_x" }), /no content-type/],
    ["L16 at 24 kHz", connected("audio/l16;rate=24000"), /unsupported content-type/],
    ["L16 at 44.1 kHz", connected("audio/l16;rate=44100"), /unsupported content-type/],
    ["mu-law", connected("audio/pcmu;rate=8000"), /unsupported content-type/],
    ["a rate with junk after it", connected("audio/l16;rate=16000;x=1"), /unsupported content-type/],
    ["33 headers", connected("audio/l16;rate=16000", headers33), /more than 32 headers/],
    ["a header value of 4097 characters", connected("audio/l16;rate=16000", { token: "x".repeat(4097) }), /longer than 4096/],
    ["a header name of 257 characters", connected("audio/l16;rate=16000", { ["k".repeat(257)]: "v" }), /header name longer/],
  ])("refuses the stream when the first message is %s, and ignores what follows", async (_label, first, why) => {
    const { client, t, seen } = await pair();
    client.send(first);
    await expect(t.waitForStart()).rejects.toThrow(why);
    // Refused: even a valid start, audio and DTMF afterwards are not acted on.
    client.send(connected("audio/l16;rate=16000"));
    client.send(Buffer.from(sine(320, 16000).buffer));
    client.send(JSON.stringify({ event: "websocket:dtmf", digit: "1" }));
    const sent: Buffer[] = [];
    client.on("message", (data) => sent.push(data as Buffer));
    t.sendAudio({ samples: new Int16Array(320), sampleRate: 16000 });
    t.sendMark("turn-1");
    expect(await hangUp(client, t)).toBe("caller_hangup");
    expect(seen).toEqual(["hangup:caller_hangup"]);
    expect(sent).toEqual([]);
  });

  it("accepts exactly 32 headers of 4096 characters, and a __proto__ header stays a plain header", async () => {
    const { client, t } = await pair();
    const headers = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`h${i}`, "y".repeat(4096)]));
    client.send(connected("audio/l16;rate=16000", headers));
    expect((await t.waitForStart()).headers).toEqual(headers);
    client.close();
    server!.close();

    const second = await pair();
    second.client.send('{"event":"websocket:connected","content-type":"audio/l16;rate=16000","__proto__":"cst_p","token":"cst_t"}');
    const info = await second.t.waitForStart();
    expect(Object.getPrototypeOf(info.headers)).toBe(Object.prototype);
    expect(Object.hasOwn(info.headers, "__proto__")).toBe(true);
    expect(info.headers.token).toBe("cst_t");
    second.client.close();
  });

  it("sends nothing before websocket:connected", async () => {
    const { client, t } = await pair();
    t.sendAudio({ samples: new Int16Array(320), sampleRate: 16000 });
    t.clearAudio();
    t.sendMark("early");
    const first = nextMessage(client);
    client.send(connected("audio/l16;rate=16000"));
    await t.waitForStart();
    t.sendMark("late");
    expect(JSON.parse((await first).data.toString())).toEqual({ action: "notify", payload: { name: "late" } });
    client.close();
  });

  it("rejects waitForStart and reports the hang-up when the stream closes first", async () => {
    const { client, t, seen } = await pair();
    expect(await hangUp(client, t)).toBe("caller_hangup");
    await expect(t.waitForStart()).rejects.toThrow(/closed before its websocket:connected/);
    expect(seen).toEqual(["hangup:caller_hangup"]);
    expect(t.closed).toBe(true);
  });

  it("close from our side ends the socket with the reason and reports no hang-up", async () => {
    const { client, t, seen } = await pair();
    client.send(connected("audio/l16;rate=16000"));
    await t.waitForStart();
    const closed = new Promise<[number, string]>((resolve) => client.once("close", (code, reason) => resolve([code, reason.toString()])));
    t.close("agent_ended");
    expect(await closed).toEqual([1000, "agent_ended"]);
    expect(t.closed).toBe(true);
    expect(seen).toEqual([]);
  });

  it.each([8000, 16000])("at %i Hz, agent audio is dropped once 2 s of it waits unsent to a client that does not read", async (rate) => {
    // A raw TCP client: handshake, websocket:connected as one masked text frame, then it never reads.
    server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((resolve) => server!.once("listening", () => resolve()));
    const accepted = new Promise<{ socket: WebSocket; t: VonageTransport }>((resolve) => server!.once("connection", (socket) => resolve({ socket, t: new VonageTransport(socket) })));
    const raw = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
    raw.write(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    raw.pause();
    const { socket, t } = await accepted;
    const payload = Buffer.from(connected(`audio/l16;rate=${rate}`));
    const mask = randomBytes(4);
    raw.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload.map((b, i) => b ^ mask[i % 4]!)]));
    expect((await t.waitForStart()).sampleRate).toBe(rate);
    // 20 minutes of agent audio at once: far more than the kernel's socket buffers take.
    const frame = { samples: sine(rate / 50, rate), sampleRate: rate };
    for (let i = 0; i < 60_000; i++) t.sendAudio(frame);
    expect(socket.bufferedAmount).toBeLessThanOrEqual(2 * rate * 2 + 4096);
    expect(t.closed).toBe(false);
    raw.destroy();
  });
});
