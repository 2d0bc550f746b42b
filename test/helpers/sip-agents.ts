import dgram from "node:dgram";
import type { EventEmitter } from "eventemitter3";
import type { AudioFrame } from "../../engine/audio/audio-frame.js";
import type { IncomingCall } from "../../engine/transports/sip/incoming-call.js";
import { parseSipMessage, type SipResponse } from "../../engine/transports/sip/sip-message.js";
import { SipUserAgent, type SipUserAgentOptions } from "../../engine/transports/sip/sip-user-agent.js";
import { rawSipPeer } from "./sip-raw-peer.js";

/**
 * Set-up shared by the SIP user agent's unit tests (the dispatcher, incoming calls, outgoing
 * calls, the call transport): user agents on loopback, calls between them, raw peers, and what
 * each test opened, closed after it when the test file runs `afterEach(runCleanups)`.
 */

export const HOST = "127.0.0.1";
export const cleanups: (() => Promise<void> | void)[] = [];

/** Closes what the test opened, last first. */
export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

/** A user agent on loopback whose inbound calls queue up for `nextInvite`. */
export async function agent(options: Partial<SipUserAgentOptions> = {}): Promise<{ ua: SipUserAgent; nextInvite: () => Promise<IncomingCall> }> {
  const queue: IncomingCall[] = [];
  const waiters: ((call: IncomingCall) => void)[] = [];
  const ua = await SipUserAgent.start({
    host: HOST,
    ...options,
    onInvite: (call) => {
      const waiter = waiters.shift();
      if (waiter) waiter(call);
      else queue.push(call);
    },
  });
  cleanups.push(() => ua.close());
  const nextInvite = () => {
    const queued = queue.shift();
    return queued ? Promise.resolve(queued) : new Promise<IncomingCall>((resolve) => waiters.push(resolve));
  };
  return { ua, nextInvite };
}

function tone(): AudioFrame {
  const samples = new Int16Array(160);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return { samples, sampleRate: 8000 };
}

function rms(frame: AudioFrame): number {
  let sum = 0;
  for (const sample of frame.samples) sum += sample * sample;
  return Math.sqrt(sum / frame.samples.length);
}

/** Sends tone frames from `sender` every 20 ms until `receiver` emits a frame with energy. */
export async function audioFlows(send: (frame: AudioFrame) => void, receiver: { on(event: "audio", listener: (frame: AudioFrame) => void): unknown }): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<number>((resolve) => {
      receiver.on("audio", (frame) => {
        if (rms(frame) > 1000) resolve(rms(frame));
      });
      timer = setInterval(() => send(tone()), 20);
    });
  } finally {
    clearInterval(timer);
  }
}

/** Places a call from `caller` to `callee` and answers it. */
export async function connect(caller: SipUserAgent, callee: Awaited<ReturnType<typeof agent>>) {
  const outgoing = caller.invite({ to: `sip:15551234@${HOST}:${callee.ua.port}`, from: "15550000" });
  const incoming = await callee.nextInvite();
  const answered = incoming.answer({ ring: true });
  const [uacCall, uasCall] = await Promise.all([outgoing.result, answered]);
  return { outgoing, incoming, uacCall, uasCall };
}

/** The arguments of the next `event` from an eventemitter3 emitter. */
export function once<T extends unknown[]>(emitter: EventEmitter<any>, event: string): Promise<T> {
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args as T)));
}

/** Sends a raw SIP request from a plain UDP socket and returns the first final response. */
export async function rawRequest(port: number, text: (localPort: number) => string): Promise<SipResponse> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, HOST, resolve));
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const response = new Promise<SipResponse>((resolve) => {
    socket.on("message", (data) => {
      const message = parseSipMessage(data);
      if (message.kind === "response" && message.status >= 200) resolve(message);
    });
  });
  socket.send(Buffer.from(text(socket.address().port).replace(/\n/g, "\r\n")), port, HOST);
  return response;
}

/** A raw SIP peer on loopback, closed after the test. */
export async function rawPeer(host?: string, port?: number) {
  const peer = await rawSipPeer(host, port);
  cleanups.push(() => peer.close());
  return peer;
}
