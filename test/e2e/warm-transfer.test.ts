import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../engine/audio/audio-frame.js";
import { decodeMulaw } from "../../engine/audio/mulaw.js";
import { parseRtpPacket } from "../../engine/transports/sip/rtp-packet.js";
import type { SipCall } from "../../engine/transports/sip/sip-call.js";
import { SipUserAgent } from "../../engine/transports/sip/sip-user-agent.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { recognise } from "../helpers/recognise.js";
import { sendLikeAPhone } from "../helpers/phone-line.js";
import { SIP_HOST as HOST, startSipService } from "../helpers/sip-service.js";
import { freeUdpPort, startSipp, type Sipp } from "../helpers/sipp.js";
import type { TestAccount, TestApp } from "../helpers/test-app.js";
import { captureUdpTo, type CapturedDatagram, type UdpCapture } from "../helpers/udp-capture.js";
import { until, untilValue } from "../helpers/until.js";

// Issue 31: a warm transfer over SIP. A caller (a SIP user agent over UDP on loopback) presses 0;
// the agent (transfer_mode warm) tells them to hold, calls the person at transfer_number through
// the SIP trunk, tells the person what the call is about, then relays the two lines' audio to
// each other. The person's phone is sipp (`-sn uas -rtp_echo`: it answers and sends back every
// RTP packet it gets). sipp cannot record what it hears, so tcpdump captures the datagrams
// delivered to its media port, and the recognizer reads them.

const NUMBER = "+14155550190";
const TRANSFER_TO = "+14155550100";
const HOLD_LINE = "Please hold while I connect you to our front desk.";

type Frame = { at: number; samples: Int16Array };

/** One side's line: the audio it receives, frame by frame, with when each arrived. */
class Ear {
  constructor(readonly frames: Frame[] = []) {}
  /** What a SIP call receives, from now on. */
  static of(call: SipCall): Ear {
    const ear = new Ear();
    call.on("audio", (frame: AudioFrame) => ear.frames.push({ at: Date.now(), samples: frame.samples }));
    return ear;
  }
  /** What was delivered to sipp's media port: the G.711 u-law RTP captured on its way in. */
  static ofCapture(datagrams: CapturedDatagram[]): Ear {
    const frames: Frame[] = [];
    for (const { at, payload } of datagrams) {
      const rtp = parseRtpPacket(payload);
      if (rtp.ok && rtp.packet.payloadType === 0) frames.push({ at, samples: decodeMulaw(rtp.packet.payload) });
    }
    return new Ear(frames);
  }
  /** When the first frame louder than speech level came after `since` (undefined: none yet). */
  voicedAfter(since: number): number | undefined {
    return this.frames.find((f) => f.at >= since && rms(f.samples) > 300)?.at;
  }
  /** Whether `ms` of quiet has followed voiced audio, counted from `since`. */
  quietAfterVoice(since: number, ms: number): boolean {
    const voiced = this.frames.filter((f) => f.at >= since && rms(f.samples) > 300);
    return voiced.length > 0 && Date.now() - voiced.at(-1)!.at >= ms;
  }
  /** The audio received between two times, as one stretch of samples. */
  between(from: number, to: number): Int16Array {
    const parts = this.frames.filter((f) => f.at >= from && f.at <= to).map((f) => f.samples);
    const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }
}

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

let app: TestApp;
let acct: TestAccount;
let sipPort: number;
let caller: SipUserAgent;
let personSipPort: number;
let capture: UdpCapture | undefined;
let person: Sipp | undefined;

beforeAll(async () => {
  // The person's phone, reached through the service's SIP trunk: sipp, started by the test.
  personSipPort = await freeUdpPort(HOST);
  ({ app, sipPort } = await startSipService("36000-36099", { PARLEY_SIP_TRUNK: `${HOST}:${personSipPort}` }));
  acct = await app.account({ credits: 100 });
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: {
      name: "Desk",
      system_prompt: "You answer calls for Acme Dental.",
      voice_id: "flite-rms",
      first_message: "Acme Dental, how can I help?",
      metadata: { business_name: "Acme Dental" },
      transfer_enabled: true,
      transfer_number: TRANSFER_TO,
      transfer_message: HOLD_LINE,
      transfer_mode: "warm",
    },
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  await app.activeNumber(acct.key, { phone_number: NUMBER, country: "US", default_agent_id: agent.body.id });
  caller = await SipUserAgent.start({ host: HOST });
}, 60_000);

afterAll(async () => {
  await person?.cleanup();
  await capture?.stop();
  await caller?.close();
  await app?.close();
});

describe("a warm transfer over SIP", () => {
  it("calls the person (sipp), who hears what the call is about before the caller is put through; then both hear each other", async () => {
    const personMediaPort = await freeUdpPort(HOST);
    capture = await captureUdpTo(personMediaPort);
    const heardByPerson = async () => Ear.ofCapture(await capture!.datagrams());
    person = await startSipp(["-sn", "uas", "-rtp_echo", "-m", "1", "-i", HOST, "-p", String(personSipPort), "-mp", String(personMediaPort)], { timeoutSeconds: 80 });

    const call = await caller.invite({ to: `sip:${NUMBER}@${HOST}:${sipPort}`, from: "sip:+14155550123@127.0.0.1" }).result;
    const connectedAt = Date.now();
    const callerEar = Ear.of(call);
    let referred = false;
    call.on("refer", (refer) => {
      referred = true;
      void refer.notify(200, "OK");
    });
    let callerHungUp = false;
    call.on("hangup", () => (callerHungUp = true));
    // The greeting, then 0 for a person.
    await until("the greeting", () => callerEar.quietAfterVoice(0, 800), 15_000);
    await call.sendDtmf("0");
    const asked = Date.now();

    // The person is called once the hold line has been said: Parley's RTP reaches sipp's port.
    const answeredAt = await untilValue("audio sent to the person's phone", async () => (await heardByPerson()).frames[0]?.at, 20_000);
    // The caller, on hold, talks over the briefing: none of it may reach the person yet.
    await untilValue("the briefing to start", async () => (await heardByPerson()).voicedAfter(answeredAt), 10_000);
    await sendLikeAPhone(call, fixtureAudio("yes-please", 8));
    await until("the briefing to be said", async () => (await heardByPerson()).quietAfterVoice(answeredAt, 1000), 30_000);
    const briefedAt = Date.now();
    const briefing = await recognise((await heardByPerson()).between(answeredAt, briefedAt));
    // "Hello, this is Desk from Acme Dental, with a caller for you. I am connecting you now.", as
    // the general model hears the agent's voice over the line ("...with the color for you...").
    expect(briefing).toMatch(/^hello this is .* for you/);
    expect(briefing).not.toMatch(/yes|please/);
    // Meanwhile the caller heard the hold line and nothing of the briefing (nor sipp's echo of
    // it); their line stayed up, with no REFER.
    expect(await recognise(callerEar.between(asked, answeredAt))).toMatch(/hold/);
    expect(callerEar.voicedAfter(answeredAt + 500)).toBeUndefined();
    expect(referred).toBe(false);
    expect(callerHungUp).toBe(false);

    // Bridged: the caller's words reach the person's phone, and its echo of them comes back.
    const callerSpoke = Date.now();
    await sendLikeAPhone(call, fixtureAudio("opening-hours", 8), { thenSilenceMs: 200 });
    await until("the echo through the bridge", () => callerEar.quietAfterVoice(callerSpoke, 500), 10_000);
    expect(await recognise((await heardByPerson()).between(callerSpoke, Date.now()))).toMatch(/opening hours/);
    expect(await recognise(callerEar.between(callerSpoke, Date.now()))).toMatch(/opening hours/);

    // The caller hangs up: the person's line is hung up too (sipp's scenario ends with the BYE it answers).
    await call.hangUp();
    const lasted = (Date.now() - connectedAt) / 1000;
    // (sipp exits 4 s after the BYE: its uas scenario waits for a repeated BYE.)
    const personEnded = await person.exited;
    expect(personEnded.code, personEnded.output).toBe(0);

    // The call lasted until the bridge ended: its duration (and bill) covers the hold, the briefing and the bridge.
    const stored = await untilValue("the call stored as transferred", async () => {
      const list = await app.request("GET", "/v1/calls?direction=inbound&status=transferred", { key: acct.key });
      return list.body.data.find((c: { from_number: string }) => c.from_number === "+14155550123");
    });
    expect(stored).toMatchObject({ phone_number: NUMBER, status: "transferred" });
    expect(stored.duration).toBeGreaterThanOrEqual(Math.floor(lasted) - 2);
  }, 90_000);
});
