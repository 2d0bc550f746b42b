import dgram, { type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { decodeAlaw, encodeAlaw } from "../../../../../engine/audio/alaw.js";
import type { AudioFrame } from "../../../../../engine/audio/audio-frame.js";
import { FrameClock } from "../../../../../engine/audio/frame-clock.js";
import { FakeClock } from "../../../../helpers/fake-clock.js";
import { decodeMulaw, encodeMulaw } from "../../../../../engine/audio/mulaw.js";
import { parseTelephoneEvent } from "../../../../../engine/transports/sip/dtmf-event.js";
import { parseRtpPacket, serializeRtpPacket, type RtpPacket } from "../../../../../engine/transports/sip/rtp-packet.js";
import { RtpSession, type RtpSessionOptions } from "../../../../../engine/transports/sip/rtp-session.js";
import type { G711Codec, NegotiatedMedia } from "../../../../../engine/transports/sip/sdp-negotiation.js";

const HOST = "127.0.0.1";
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function media(remotePort: number, overrides: Partial<NegotiatedMedia> = {}): NegotiatedMedia {
  return {
    remoteAddress: HOST,
    remotePort,
    codec: { name: "PCMU", payloadType: 0, clockRate: 8000 },
    dtmfPayloadType: 101,
    ptime: 20,
    direction: "sendrecv",
    ...overrides,
  };
}

async function open(options: Partial<RtpSessionOptions> = {}): Promise<RtpSession> {
  const session = await RtpSession.open({ host: HOST, ...options });
  cleanups.push(() => session.close());
  return session;
}

/** Two sessions on loopback, each started towards the other. */
async function pair(overrides: Partial<NegotiatedMedia> = {}): Promise<[RtpSession, RtpSession]> {
  const a = await open();
  const b = await open();
  a.start(media(b.localPort, overrides));
  b.start(media(a.localPort, overrides));
  return [a, b];
}

/** A plain UDP socket on loopback that records the RTP packets it receives. */
interface RawPeer {
  port: number;
  packets: RtpPacket[];
  /** Resolves once `count` packets have arrived in all. */
  received(count: number): Promise<RtpPacket[]>;
  send(packet: RtpPacket, port: number): Promise<void>;
}

/** A raw peer bound on `host` (127.0.0.2 stands for another machine: loopback too, but not the far end's address). */
async function rawPeer(host = HOST): Promise<RawPeer> {
  const socket: Socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const packets: RtpPacket[] = [];
  const waiters: (() => void)[] = [];
  socket.on("message", (data) => {
    const parsed = parseRtpPacket(data);
    if (parsed.ok) packets.push({ ...parsed.packet, payload: Uint8Array.from(parsed.packet.payload) });
    for (const waiter of waiters.splice(0)) waiter();
  });
  const peer: RawPeer = {
    port: socket.address().port,
    packets,
    received: (count) =>
      new Promise((resolve) => {
        const check = () => (packets.length >= count ? resolve(packets.slice(0, count)) : waiters.push(check));
        check();
      }),
    send: (packet, port) => new Promise((resolve, reject) => socket.send(serializeRtpPacket(packet), port, HOST, (error) => (error ? reject(error) : resolve()))),
  };
  return peer;
}

const isSilence = (frame: AudioFrame) => frame.samples.every((sample) => sample === 0);

/** The next `count` frames with sound in them: the playout clock emits silence whenever nothing is buffered. */
function nextFrames(session: RtpSession, count: number): Promise<AudioFrame[]> {
  return new Promise((resolve) => {
    const frames: AudioFrame[] = [];
    const onAudio = (frame: AudioFrame) => {
      if (isSilence(frame)) return;
      frames.push(frame);
      if (frames.length < count) return;
      session.off("audio", onAudio);
      resolve(frames);
    };
    session.on("audio", onAudio);
  });
}

/** Sends frames at real-time pace, as the call session does; resolves when the last has played. */
function sendPaced(session: RtpSession, frames: AudioFrame[]): Promise<void> {
  const clock = new FrameClock();
  clock.on("frame", (frame) => session.sendAudio(frame));
  return new Promise((resolve) => {
    clock.once("idle", () => resolve());
    for (const frame of frames) clock.enqueue(frame);
  });
}

const sineFrames = (count: number): AudioFrame[] =>
  Array.from({ length: count }, (_, f) => ({
    samples: Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * (f * 160 + i)) / 8000))),
    sampleRate: 8000,
  }));

const constantFrame = (value: number): AudioFrame => ({ samples: new Int16Array(160).fill(value), sampleRate: 8000 });

const concat = (frames: AudioFrame[]) => Int16Array.from(frames.flatMap((frame) => Array.from(frame.samples)));

const G711: Record<G711Codec, (samples: Int16Array) => Int16Array> = {
  PCMU: (samples) => decodeMulaw(encodeMulaw(samples)),
  PCMA: (samples) => decodeAlaw(encodeAlaw(samples)),
};

describe("RtpSession over loopback UDP", () => {
  it.each([
    ["PCMU", 0],
    ["PCMA", 8],
  ] as const)("carries %s frames from one session to the other, in order, 20 ms at 8 kHz", async (name, payloadType) => {
    const [a, b] = await pair({ codec: { name, payloadType, clockRate: 8000 } });
    const sent = sineFrames(15);
    const arriving = nextFrames(b, 15);
    await sendPaced(a, sent);
    const received = await arriving;
    expect(received.every((frame) => frame.sampleRate === 8000 && frame.samples.length === 160)).toBe(true);
    const original = concat(sent);
    const got = concat(received);
    expect(got).toEqual(G711[name](original)); // exactly the codec's round trip: nothing lost, reordered or concealed
    const worstError = Math.max(...Array.from(original, (sample, i) => Math.abs(sample - got[i]!)));
    expect(worstError).toBeLessThan(300); // G.711 quantisation at this level
    expect(b.stats.jitter).toMatchObject({ played: 15, concealed: 0 });
  });

  it("numbers packets: sequence +1, timestamp +160, one SSRC, marker at each talkspurt; DTMF as RFC 4733 events", async () => {
    const peer = await rawPeer();
    const a = await open();
    a.start(media(peer.port));
    const frames = [constantFrame(1000), constantFrame(2000), constantFrame(3000)];
    for (const frame of frames) a.sendAudio(frame);
    a.clearAudio();
    a.sendAudio(constantFrame(4000));
    const audio = await peer.received(4);
    const first = audio[0]!;
    expect(audio.map((p) => p.payloadType)).toEqual([0, 0, 0, 0]);
    expect(audio.map((p) => p.ssrc)).toEqual(Array(4).fill(first.ssrc));
    expect(audio.map((p) => (p.sequence - first.sequence) & 0xffff)).toEqual([0, 1, 2, 3]);
    expect(audio.slice(0, 3).map((p) => (p.timestamp - first.timestamp) >>> 0)).toEqual([0, 160, 320]);
    expect(audio.map((p) => p.marker)).toEqual([true, false, false, true]);
    expect(Array.from(audio[1]!.payload)).toEqual(Array.from(encodeMulaw(frames[1]!.samples)));

    await a.sendDtmf("5");
    const events = (await peer.received(4 + 5)).slice(4);
    const reports = events.map((p) => parseTelephoneEvent(p.payload)!);
    expect(events.map((p) => p.payloadType)).toEqual(Array(5).fill(101));
    expect(events.map((p) => (p.sequence - first.sequence) & 0xffff)).toEqual([4, 5, 6, 7, 8]);
    expect(new Set(events.map((p) => p.timestamp)).size).toBe(1);
    expect(((events[0]!.timestamp - audio[3]!.timestamp) >>> 0) >= 160).toBe(true);
    expect(events.map((p) => p.marker)).toEqual([true, false, false, false, false]);
    expect(reports.map((r) => [r.event, r.end, r.duration])).toEqual([
      [5, false, 400],
      [5, false, 800],
      [5, true, 800],
      [5, true, 800],
      [5, true, 800],
    ]);
  });

  it("puts out-of-order packets back in order through the jitter buffer (across the sequence wrap)", async () => {
    const peer = await rawPeer();
    const b = await open();
    b.start(media(peer.port));
    const sequences = [65533, 65534, 65535, 0, 1];
    const values = [1000, 2000, 3000, 4000, 5000];
    const arriving = nextFrames(b, 5);
    for (const index of [1, 0, 2, 4, 3]) {
      const payload = encodeMulaw(constantFrame(values[index]!).samples);
      await peer.send({ marker: index === 0, payloadType: 0, sequence: sequences[index]!, timestamp: 160 * index, ssrc: 99, csrcs: [], payload }, b.localPort);
    }
    const received = await arriving;
    expect(received.map((frame) => frame.samples[0])).toEqual(values.map((value) => decodeMulaw(encodeMulaw(Int16Array.of(value)))[0]));
    expect(b.stats.jitter).toMatchObject({ played: 5, concealed: 0, late: 0 });
  });

  it("delivers the digits 1# sent by one session exactly once each to the other", async () => {
    const [a, b] = await pair();
    const digits: string[] = [];
    b.on("dtmf", (digit) => digits.push(digit));
    await a.sendDtmf("1#");
    // Audio sent after the digits arrives after all their packets: wait for it, not for time.
    const after = nextFrames(b, 1);
    for (const frame of sineFrames(3)) a.sendAudio(frame);
    await after;
    expect(digits).toEqual(["1", "#"]);
    expect(b.stats.received).toBe(10 + 3);
  });

  it("refuses DTMF when the far end did not negotiate telephone-event", async () => {
    const [a] = await pair({ dtmfPayloadType: null });
    await expect(a.sendDtmf("1")).rejects.toThrow(/telephone-event/);
    await expect(a.sendDtmf("x")).rejects.toThrow(RangeError);
  });

  it("ignores packets from a stranger once latched onto the far end", async () => {
    const [a, b] = await pair();
    const stranger = await rawPeer();
    const first = nextFrames(b, 3);
    for (const value of [100, 200, 300]) a.sendAudio(constantFrame(value));
    await first;
    for (let i = 0; i < 3; i++) {
      await stranger.send({ marker: false, payloadType: 0, sequence: i, timestamp: 160 * i, ssrc: 5, csrcs: [], payload: encodeMulaw(constantFrame(20000).samples) }, b.localPort);
    }
    const second = nextFrames(b, 3);
    for (const value of [400, 500, 600]) a.sendAudio(constantFrame(value));
    const heard = await second;
    expect(heard.map((frame) => frame.samples[0])).toEqual([400, 500, 600].map((value) => decodeMulaw(encodeMulaw(Int16Array.of(value)))[0]));
    expect(b.stats.ignored).toBe(3);
    expect(b.remoteAddress).toEqual({ address: HOST, port: a.localPort });
  });

  it("with symmetric RTP off, ignores a stranger even before the far end's first packet", async () => {
    const a = await open();
    const b = await open({ symmetric: false });
    a.start(media(b.localPort));
    b.start(media(a.localPort));
    const stranger = await rawPeer();
    await stranger.send({ marker: true, payloadType: 0, sequence: 1, timestamp: 0, ssrc: 5, csrcs: [], payload: encodeMulaw(constantFrame(20000).samples) }, b.localPort);
    const heard = nextFrames(b, 3);
    for (const value of [400, 500, 600]) a.sendAudio(constantFrame(value));
    expect((await heard).map((frame) => frame.samples[0])).toEqual([400, 500, 600].map((value) => decodeMulaw(encodeMulaw(Int16Array.of(value)))[0]));
    expect(b.stats.ignored).toBe(1);
  });

  it("latches onto the signalling host's first packet (a peer behind NAT) and answers it there", async () => {
    const nat = await rawPeer();
    const b = await open();
    b.start(media(9, { direction: "sendrecv" }), HOST); // the SDP names a port nobody sends from; the INVITE came from HOST
    const heard = nextFrames(b, 1);
    for (let i = 0; i < 3; i++) {
      await nat.send({ marker: i === 0, payloadType: 0, sequence: i, timestamp: 160 * i, ssrc: 5, csrcs: [], payload: encodeMulaw(constantFrame(700).samples) }, b.localPort);
    }
    await heard;
    expect(b.remoteAddress).toEqual({ address: HOST, port: nat.port });
    b.sendAudio(constantFrame(800));
    const [reply] = await nat.received(1);
    expect(Array.from(reply!.payload)).toEqual(Array.from(encodeMulaw(constantFrame(800).samples)));
  });

  it("before the far end's first packet, a stranger spraying packets is neither latched onto nor heard", async () => {
    const caller = await rawPeer();
    const stranger = await rawPeer("127.0.0.2");
    const b = await open();
    b.start(media(caller.port), HOST); // the caller's SDP and INVITE both name 127.0.0.1
    const loud = encodeMulaw(constantFrame(20000).samples);
    for (let i = 0; i < 5; i++) await stranger.send({ marker: i === 0, payloadType: 0, sequence: i, timestamp: 160 * i, ssrc: 66, csrcs: [], payload: loud }, b.localPort);
    const heard = nextFrames(b, 3);
    for (const [i, value] of [400, 500, 600].entries()) {
      await caller.send({ marker: i === 0, payloadType: 0, sequence: 1000 + i, timestamp: 160 * i, ssrc: 7, csrcs: [], payload: encodeMulaw(constantFrame(value).samples) }, b.localPort);
    }
    expect((await heard).map((frame) => frame.samples[0])).toEqual([400, 500, 600].map((value) => decodeMulaw(encodeMulaw(Int16Array.of(value)))[0]));
    expect(b.remoteAddress).toEqual({ address: HOST, port: caller.port });
    expect(b.stats.ignored).toBe(5);
    b.sendAudio(constantFrame(800));
    await caller.received(1);
    expect(stranger.packets).toEqual([]);
  });

  it("for a peer behind NAT (its SDP names a private address), latches only onto the signalling host, not a stranger that sends first", async () => {
    const nat = await rawPeer();
    const stranger = await rawPeer("127.0.0.2");
    const b = await open();
    // Nothing is ever sent to 10.0.0.5: no audio goes out before the far end is latched onto.
    b.start(media(40000, { remoteAddress: "10.0.0.5" }), HOST);
    const loud = encodeMulaw(constantFrame(20000).samples);
    for (let i = 0; i < 3; i++) await stranger.send({ marker: false, payloadType: 0, sequence: i, timestamp: 160 * i, ssrc: 66, csrcs: [], payload: loud }, b.localPort);
    const burst = async (from: RawPeer, ssrc: number, value: number) => {
      for (let i = 0; i < 3; i++) {
        await from.send({ marker: i === 0, payloadType: 0, sequence: 100 * ssrc + i, timestamp: 160 * i, ssrc, csrcs: [], payload: encodeMulaw(constantFrame(value).samples) }, b.localPort);
      }
    };
    const heard = nextFrames(b, 3);
    await burst(nat, 5, 700);
    expect((await heard).map((frame) => frame.samples[0])).toEqual(Array(3).fill(decodeMulaw(encodeMulaw(Int16Array.of(700)))[0]));
    expect(b.remoteAddress).toEqual({ address: HOST, port: nat.port });
    // Latched: another port of the same host is a stranger too; a new SSRC is taken from the latched source.
    const other = await rawPeer();
    await burst(other, 9, 20000);
    const next = nextFrames(b, 3);
    await burst(nat, 6, 900);
    expect((await next).map((frame) => frame.samples[0])).toEqual(Array(3).fill(decodeMulaw(encodeMulaw(Int16Array.of(900)))[0]));
    expect(b.stats.ignored).toBe(6);
  });

  it("binds an even port in the given range and releases it on close()", async () => {
    const probe = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => probe.bind(0, HOST, resolve));
    const even = probe.address().port & ~1;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const range = [even, even + 1] as const;

    const first = await RtpSession.open({ host: HOST, portRange: range });
    expect(first.localPort).toBe(even);
    await expect(RtpSession.open({ host: HOST, portRange: range })).rejects.toThrow(/no free RTP port/);
    first.start(media(9));
    await first.close();
    expect(() => first.sendAudio(constantFrame(1))).not.toThrow();
    await expect(first.sendDtmf("1")).rejects.toThrow(/closed/);

    const second = await RtpSession.open({ host: HOST, portRange: range });
    expect(second.localPort).toBe(even);
    await second.close();
  });
});

/** Waits (in real time: the packets cross loopback UDP) until the session has taken `count` packets in. */
async function taken(session: RtpSession, count: number): Promise<void> {
  while (session.stats.received + session.stats.ignored < count) await new Promise((resolve) => setTimeout(resolve, 1));
}

describe("RtpSession's playout clock (silence suppression at the far end)", () => {
  const heard = (value: number) => decodeMulaw(encodeMulaw(Int16Array.of(value)))[0]!;

  /** A session on a fake clock, started towards a raw peer, recording every frame it emits. */
  async function setup() {
    const clock = new FakeClock();
    const peer = await rawPeer();
    const session = await open({ clock });
    session.start(media(peer.port));
    const frames: AudioFrame[] = [];
    session.on("audio", (frame) => frames.push(frame));
    let packets = 0;
    /** Sends one 20 ms packet per frame period, as a phone does, and lets the clock run along. */
    const talk = async (first: { sequence: number; timestamp: number }, values: number[]) => {
      for (const [i, value] of values.entries()) {
        const payload = encodeMulaw(constantFrame(value).samples);
        await peer.send({ marker: i === 0, payloadType: 0, sequence: first.sequence + i, timestamp: first.timestamp + 160 * i, ssrc: 7, csrcs: [], payload }, session.localPort);
        await taken(session, ++packets);
        clock.advance(20);
      }
    };
    /** Comfort noise (RFC 3389, payload type 13, not negotiated): it uses up a sequence number and is ignored. */
    const comfortNoise = async (sequence: number, timestamp: number) => {
      await peer.send({ marker: false, payloadType: 13, sequence, timestamp, ssrc: 7, csrcs: [], payload: Uint8Array.of(40) }, session.localPort);
      await taken(session, ++packets);
    };
    return { clock, session, frames, talk, comfortNoise };
  }

  const firstValues = [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000];

  it("emits one frame every 20 ms from start(), silence standing in while the far end sends nothing", async () => {
    const { clock, session, frames, talk } = await setup();
    await talk({ sequence: 100, timestamp: 16000 }, firstValues);
    const talked = frames.length;
    clock.advance(1000); // the caller stopped talking and the phone stopped sending
    expect(frames.length).toBe(clock.now() / 20);
    expect(frames.length - talked).toBe(50);
    const sounding = frames.filter((frame) => !isSilence(frame));
    expect(sounding.map((frame) => frame.samples[0])).toEqual(firstValues.map(heard));
    const lastSound = frames.lastIndexOf(sounding.at(-1)!);
    const pause = frames.slice(lastSound + 1);
    expect(pause.length).toBeGreaterThanOrEqual(45); // the second minus what was still buffered
    expect(pause.every((frame) => isSilence(frame) && frame.samples.length === 160 && frame.sampleRate === 8000)).toBe(true);
    expect(session.stats.silenceFrames).toBe(frames.length - sounding.length);
    expect(session.stats.jitter).toMatchObject({ played: 10, concealed: 0 });
  });

  it("plays a talkspurt after a pause (comfort noise, then a marker and a timestamp jump) promptly and in order", async () => {
    const { clock, session, frames, talk, comfortNoise } = await setup();
    await talk({ sequence: 100, timestamp: 16000 }, firstValues);
    await comfortNoise(110, 16000 + 1600);
    clock.advance(1000);
    const before = frames.length;
    const nextValues = [11000, 12000, 13000, 14000, 15000];
    await talk({ sequence: 111, timestamp: 16000 + 1600 + 8000 }, nextValues);
    // The talkspurt's first packet plays once the jitter buffer holds its depth again (60 ms).
    expect(frames.slice(before, before + 3).map((frame) => frame.samples[0])).toEqual([0, 0, heard(11000)]);
    clock.advance(100);
    const after = frames.slice(before).filter((frame) => !isSilence(frame));
    expect(after.map((frame) => frame.samples[0])).toEqual(nextValues.map(heard));
    expect(session.stats.ignored).toBe(1);
    expect(session.stats.jitter).toMatchObject({ played: 15, concealed: 0, late: 0, talkspurts: 1 });
  });

  it("stops on close(): no frames after it, no timers left", async () => {
    const { clock, session, frames, talk } = await setup();
    await talk({ sequence: 1, timestamp: 0 }, [1000, 2000, 3000, 4000]);
    clock.advance(100);
    const count = frames.length;
    await session.close();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(1000);
    expect(frames.length).toBe(count);
  });
});

describe("RtpSession's timeout (a far end gone without a BYE)", () => {
  async function watched(timeoutMs: number, direction: NegotiatedMedia["direction"] = "sendrecv") {
    const clock = new FakeClock();
    const peer = await rawPeer();
    const session = await open({ clock, timeoutMs });
    session.start(media(peer.port, { direction }));
    let timeouts = 0;
    session.on("timeout", () => timeouts++);
    return { clock, peer, session, timeouts: () => timeouts };
  }

  it("fires once after timeoutMs with nothing from the far end; comfort noise counts as a sign of life", async () => {
    const { clock, peer, session, timeouts } = await watched(1000);
    clock.advance(900);
    await peer.send({ marker: false, payloadType: 13, sequence: 1, timestamp: 0, ssrc: 7, csrcs: [], payload: Uint8Array.of(40) }, session.localPort);
    await taken(session, 1);
    clock.advance(900);
    expect(timeouts()).toBe(0);
    clock.advance(200);
    expect(timeouts()).toBe(1);
    clock.advance(5000);
    expect(timeouts()).toBe(1);
  });

  it("does not fire while the far end is not meant to send (we are on hold: sendonly, inactive), nor with timeoutMs 0", async () => {
    for (const direction of ["sendonly", "inactive"] as const) {
      const { clock, timeouts } = await watched(1000, direction);
      clock.advance(5000);
      expect(timeouts(), direction).toBe(0);
    }
    const off = await watched(0);
    off.clock.advance(120_000);
    expect(off.timeouts()).toBe(0);
  });
});
