import { randomBytes } from "node:crypto";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { decodeAlaw, encodeAlaw } from "../../../../engine/audio/alaw.js";
import type { AudioFrame } from "../../../../engine/audio/audio-frame.js";
import { decodeMulaw, encodeMulaw } from "../../../../engine/audio/mulaw.js";
import { parseTelnyxMessage } from "../../../../engine/transports/websocket/telnyx-messages.js";
import { TelnyxTransport } from "../../../../engine/transports/websocket/telnyx-transport.js";

let server: WebSocketServer | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

/** A loopback WebSocket pair: the server side becomes a TelnyxTransport, the client plays Telnyx. */
async function pair(): Promise<{ client: WebSocket; t: TelnyxTransport }> {
  server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise<void>((resolve) => server!.once("listening", () => resolve()));
  const transport = new Promise<TelnyxTransport>((resolve) => server!.once("connection", (socket) => resolve(new TelnyxTransport(socket))));
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await new Promise<void>((resolve) => client.once("open", () => resolve()));
  return { client, t: await transport };
}

const sine = (n: number) => Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
const nextMessage = (ws: WebSocket) => new Promise<unknown>((resolve) => ws.once("message", (data) => resolve(JSON.parse((data as Buffer).toString()))));
/** Lets the messages sent so far arrive (loopback) before asserting what they did. */
const settle = () => new Promise((r) => setTimeout(r, 100));

/** A `start` as Telnyx's media streaming documents it. */
function start(encoding = "PCMU", mediaFormat: Record<string, unknown> = {}) {
  return {
    event: "start",
    sequence_number: "1",
    stream_id: "32de0dea-53cb-4b21-89a4-9e1819c043bc",
    start: {
      user_id: "3e6f995f-85f7-4705-9741-53b116d28237",
      call_control_id: "v3:T02llQxIyaRkhfRKxgAP8nY511EhFLizdvdUKJiSw8d6A9BborherQ",
      call_session_id: "ff55a038-6f5d-11ef-9692-02420aeffb1f",
      from: "+13122010094",
      to: "+13122123456",
      tags: ["TAG1"],
      client_state: "aGF2ZSBhIG5pY2UgZGF5ID1d",
      custom_parameters: { stream_token: "cst_abc" },
      media_format: { encoding, sample_rate: 8000, channels: 1, ...mediaFormat },
    },
  };
}

/** Starts that are not well-formed, each with what is wrong with it. */
const BAD_STARTS: [string, string][] = (
  [
    ["no start object", (s) => delete (s as { start?: unknown }).start],
    ["no stream_id", (s) => delete (s as { stream_id?: string }).stream_id],
    ["a stream_id of 257 characters", (s) => (s.stream_id = "x".repeat(257))],
    ["a stream_id with a space", (s) => (s.stream_id = "has space")],
    ["a call_control_id that is a number", (s) => ((s.start as Record<string, unknown>).call_control_id = 42)],
    ["an empty call_control_id", (s) => (s.start.call_control_id = "")],
    ["no media_format", (s) => delete (s.start as Record<string, unknown>).media_format],
    ["a negative sample rate", (s) => (s.start.media_format.sample_rate = -8000)],
    ["a fractional sample rate", (s) => (s.start.media_format.sample_rate = 8000.5)],
    ["an encoding that is not a string", (s) => ((s.start.media_format as Record<string, unknown>).encoding = ["PCMU"])],
    ["an encoding of 33 characters", (s) => (s.start.media_format.encoding = "P".repeat(33))],
    ["custom_parameters as an array", (s) => ((s.start as Record<string, unknown>).custom_parameters = ["x"])],
    ["a parameter that is not a string", (s) => ((s.start as Record<string, unknown>).custom_parameters = { token: 5 })],
    ["a parameter value of 4,097 characters", (s) => ((s.start as Record<string, unknown>).custom_parameters = { big: "x".repeat(4097) })],
    ["a parameter name of 65 characters", (s) => ((s.start as Record<string, unknown>).custom_parameters = { ["n".repeat(65)]: "v" })],
    ["33 parameters", (s) => ((s.start as Record<string, unknown>).custom_parameters = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`p${i}`, "v"])))],
    ["a client_state of 4,097 characters", (s) => (s.start.client_state = "x".repeat(4097))],
    ["a from with a line break", (s) => (s.start.from = "+1555\r\nX-Injected: 1")],
    ["a to that is not a string", (s) => ((s.start as Record<string, unknown>).to = { n: 1 })],
  ] as [string, (s: ReturnType<typeof start>) => void][]
).map(([what, mutate]) => {
  const s = start();
  mutate(s);
  return [what, JSON.stringify(s)];
});

function media(payload: Uint8Array | string, track = "inbound", chunk = 1) {
  return {
    event: "media",
    sequence_number: String(chunk + 1),
    stream_id: "32de0dea-53cb-4b21-89a4-9e1819c043bc",
    media: { track, chunk: String(chunk), timestamp: String(chunk * 20), payload: typeof payload === "string" ? payload : Buffer.from(payload).toString("base64") },
  };
}

describe("TelnyxTransport", () => {
  it("reads start: stream id, call control id, media format, custom parameters and client state", async () => {
    const { client, t } = await pair();
    expect(t.protocol).toBe("telnyx");
    client.send(JSON.stringify({ event: "connected", version: "1.0.0" }));
    client.send(JSON.stringify(start()));
    expect(await t.waitForStart()).toEqual({
      streamId: "32de0dea-53cb-4b21-89a4-9e1819c043bc",
      callControlId: "v3:T02llQxIyaRkhfRKxgAP8nY511EhFLizdvdUKJiSw8d6A9BborherQ",
      encoding: "PCMU",
      sampleRate: 8000,
      channels: 1,
      parameters: { stream_token: "cst_abc" },
      clientState: "aGF2ZSBhIG5pY2UgZGF5ID1d",
      from: "+13122010094",
      to: "+13122123456",
    });
    expect([t.inputSampleRate, t.outputSampleRate]).toEqual([8000, 8000]);
    client.close();
  });

  it.each([
    ["PCMU", encodeMulaw, decodeMulaw],
    ["PCMA", encodeAlaw, decodeAlaw],
  ])("%s: caller audio is decoded into 20 ms frames, agent audio sent in the stream's codec", async (encoding, encode, decode) => {
    const { client, t } = await pair();
    const frames: AudioFrame[] = [];
    t.on("audio", (f) => frames.push(f));
    client.send(JSON.stringify(start(encoding)));
    await t.waitForStart();
    // 300 samples in two chunks of uneven length: one whole frame, and 140 samples held back.
    const tone = sine(300);
    const wire = encode(tone);
    client.send(JSON.stringify(media(wire.subarray(0, 100), "inbound", 1)));
    client.send(JSON.stringify(media(wire.subarray(100), "inbound", 2)));
    // The agent's own audio echoed back (`both_tracks`) is not the caller's.
    client.send(JSON.stringify(media(encode(sine(160)), "outbound", 3)));
    await settle();
    expect(frames.map((f) => [f.samples.length, f.sampleRate])).toEqual([[160, 8000]]);
    expect(Array.from(frames[0]!.samples)).toEqual(Array.from(decode(wire.subarray(0, 160))));

    const sent = nextMessage(client);
    const agent = sine(160);
    t.sendAudio({ samples: agent, sampleRate: 8000 });
    const message = (await sent) as { event: string; media: { payload: string } };
    expect(Object.keys(message).sort()).toEqual(["event", "media"]);
    expect(message.event).toBe("media");
    expect(Object.keys(message.media)).toEqual(["payload"]);
    expect(Buffer.from(message.media.payload, "base64")).toEqual(Buffer.from(encode(agent)));
    expect(() => t.sendAudio({ samples: new Int16Array(320), sampleRate: 16000 })).toThrow(/8000/);
    client.close();
  });

  it("sends clear and marks, reports marks Telnyx returns, DTMF, and stop as the caller hanging up", async () => {
    const { client, t } = await pair();
    const events: string[] = [];
    t.on("dtmf", (d) => events.push(`dtmf:${d}`));
    t.on("mark", (m) => events.push(`mark:${m}`));
    t.on("hangup", (r) => events.push(`hangup:${r}`));
    client.send(JSON.stringify(start("PCMA")));
    await t.waitForStart();

    const clear = nextMessage(client);
    t.clearAudio();
    expect(await clear).toEqual({ event: "clear" });
    const mark = nextMessage(client);
    t.sendMark("turn-3");
    expect(await mark).toEqual({ event: "mark", mark: { name: "turn-3" } });

    const id = "32de0dea-53cb-4b21-89a4-9e1819c043bc";
    client.send(JSON.stringify({ event: "dtmf", stream_id: id, occurred_at: "2024-01-01T00:00:00Z", sequence_number: "3", dtmf: { digit: "#" } }));
    client.send(JSON.stringify({ event: "mark", sequence_number: "4", stream_id: id, mark: { name: "turn-3" } }));
    expect(t.closed).toBe(false);
    client.send(JSON.stringify({ event: "stop", sequence_number: "5", stream_id: id, stop: { user_id: "u", call_control_id: "v3:x" } }));
    await settle();
    expect(events).toEqual(["dtmf:#", "mark:turn-3", "hangup:caller_hangup"]);
    expect(t.closed).toBe(true);
    client.close();
  });

  it("ignores malformed messages, before and after start, and goes on", async () => {
    const { client, t } = await pair();
    const seen: string[] = [];
    t.on("audio", () => seen.push("audio"));
    t.on("dtmf", (d) => seen.push(`dtmf:${d}`));
    t.on("mark", (m) => seen.push(`mark:${m}`));
    t.on("hangup", (r) => seen.push(`hangup:${r}`));
    let started = false;
    void t.waitForStart().then(() => (started = true));
    for (const message of [
      "not json",
      "[1,2]",
      "null",
      ...BAD_STARTS.map(([, text]) => text),
      // Media before a start has no codec to be decoded with.
      JSON.stringify(media(encodeMulaw(sine(160)))),
    ]) {
      client.send(message);
    }
    await settle();
    expect(seen).toEqual([]);
    expect(started).toBe(false);

    client.send(JSON.stringify(start()));
    expect((await t.waitForStart()).encoding).toBe("PCMU");
    // A second start cannot switch the codec.
    client.send(JSON.stringify(start("PCMA")));
    client.send(JSON.stringify({ event: "flood", data: "x".repeat(1000) }));
    client.send(JSON.stringify({ event: "error", payload: { code: 100002, title: "unknown_error" } }));
    client.send(randomBytes(160));
    // Payloads that are not clean base64 (Node would decode "AAAA*" leniently into audio), or too long.
    for (const payload of ["AAAA*".repeat(40), "AAA", "AA==AAAA", "A".repeat(161), "A".repeat(16_004)]) client.send(JSON.stringify(media(payload)));
    client.send(JSON.stringify({ event: "media", media: { payload: 5 } }));
    client.send(JSON.stringify({ event: "media", media: { track: 7, payload: Buffer.from(encodeMulaw(sine(160))).toString("base64") } }));
    for (const digit of ["12", "x", "", 5]) client.send(JSON.stringify({ event: "dtmf", dtmf: { digit } }));
    client.send(JSON.stringify({ event: "dtmf" }));
    client.send(JSON.stringify({ event: "mark", mark: { name: "x".repeat(1025) } }));
    client.send(JSON.stringify({ event: "mark", mark: {} }));
    // And a good one of each still gets through.
    const frames: AudioFrame[] = [];
    t.on("audio", (f) => frames.push(f));
    const tone = sine(160);
    client.send(JSON.stringify(media(encodeMulaw(tone))));
    client.send(JSON.stringify({ event: "dtmf", dtmf: { digit: "7" } }));
    await settle();
    expect(seen).toEqual(["audio", "dtmf:7"]);
    // Decoded as PCMU, the codec of the first start, not the second's PCMA.
    expect(Array.from(frames[0]!.samples)).toEqual(Array.from(decodeMulaw(encodeMulaw(tone))));
    expect(t.closed).toBe(false);
    client.close();
  });

  it.each([
    ["G722", 16000, 1],
    ["OPUS", 48000, 1],
    ["L16", 16000, 1],
    ["pcmu", 8000, 1],
    ["PCMU", 16000, 1],
    ["PCMA", 8000, 2],
  ])("refuses a start in %s at %i Hz with %i channel(s): waitForStart rejects, no audio flows either way", async (encoding, sampleRate, channels) => {
    const { client, t } = await pair();
    const frames: AudioFrame[] = [];
    t.on("audio", (f) => frames.push(f));
    const received: unknown[] = [];
    client.on("message", (data) => received.push(JSON.parse((data as Buffer).toString())));
    client.send(JSON.stringify(start(encoding, { sample_rate: sampleRate, channels })));
    await expect(t.waitForStart()).rejects.toThrow(/unsupported media format/);
    client.send(JSON.stringify(media(randomBytes(320))));
    t.sendAudio({ samples: sine(160), sampleRate: 8000 });
    // A well-formed start after the refused one does not undo the refusal.
    client.send(JSON.stringify(start("PCMU")));
    client.send(JSON.stringify(media(encodeMulaw(sine(160)))));
    await settle();
    expect(frames).toEqual([]);
    expect(received).toEqual([]);
    client.close();
  });

  it("rejects waitForStart when the stream closes first, and reports the hang-up", async () => {
    const { client, t } = await pair();
    const hangups: string[] = [];
    t.on("hangup", (r) => hangups.push(r));
    client.close();
    await expect(t.waitForStart()).rejects.toThrow(/before its start/);
    expect(hangups).toEqual(["connection_closed"]);
  });
});

describe("a Telnyx peer that does not read what it is sent", () => {
  /** One masked text frame, as a client sends it (RFC 6455 5.2), for a payload under 64 KiB. */
  function clientTextFrame(text: string): Buffer {
    const payload = Buffer.from(text);
    const mask = randomBytes(4);
    const header = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    return Buffer.concat([header, mask, payload.map((byte, i) => byte ^ mask[i % 4]!)]);
  }

  it("drops agent audio once 2 s of it waits unsent, and cuts a peer that stays stalled off", async () => {
    server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    await new Promise<void>((resolve) => server!.once("listening", () => resolve()));
    const accepted = new Promise<{ socket: WebSocket; t: TelnyxTransport }>((resolve) => server!.once("connection", (socket) => resolve({ socket, t: new TelnyxTransport(socket) })));
    const raw = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
    raw.write(
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const { socket, t } = await accepted;
    raw.write(clientTextFrame(JSON.stringify(start())));
    await t.waitForStart();
    // From here on the peer reads nothing.
    raw.pause();
    const hangups: string[] = [];
    t.on("hangup", (reason) => hangups.push(reason));
    // 20 minutes of agent audio at once: far more than the kernel's socket buffers take.
    const frame = { samples: sine(160), sampleRate: 8000 };
    for (let i = 0; i < 60_000; i++) t.sendAudio(frame);
    // 2 s of Telnyx media messages (50 a second, each under 300 bytes), plus one in flight.
    expect(socket.bufferedAmount).toBeLessThanOrEqual(2 * 50 * 300 + 4096);
    expect(t.closed).toBe(false);
    for (let i = 0; i < 2000 && !t.closed; i++) t.sendMark(`mark-${i}-${"x".repeat(1000)}`);
    expect(t.closed).toBe(true);
    expect(hangups).toEqual(["client_not_reading"]);
    raw.destroy();
  });
});

describe("parseTelnyxMessage", () => {
  it.each(BAD_STARTS)("drops a start with %s", (_, text) => {
    expect(parseTelnyxMessage(text)).toBeUndefined();
  });

  it("keeps a parameter named __proto__ as a plain parameter", () => {
    const s = start();
    const text = JSON.stringify(s).replace('"custom_parameters":{"stream_token":"cst_abc"}', '"custom_parameters":{"__proto__":"x","stream_token":"cst_abc"}');
    const parsed = parseTelnyxMessage(text);
    expect(parsed?.event).toBe("start");
    const parameters = (parsed as { start: { parameters: Record<string, string> } }).start.parameters;
    expect(Object.getOwnPropertyDescriptor(parameters, "__proto__")?.value).toBe("x");
    expect(parameters.stream_token).toBe("cst_abc");
    expect(parameters.toString).toBeUndefined();
  });

  it("takes a start without custom parameters, client state or addresses", () => {
    const s = start();
    const { custom_parameters: _p, client_state: _c, from: _f, to: _t, ...rest } = s.start;
    const parsed = parseTelnyxMessage(JSON.stringify({ ...s, start: rest }));
    expect(parsed).toMatchObject({ event: "start", start: { parameters: {}, clientState: null, from: null, to: null } });
  });
});
