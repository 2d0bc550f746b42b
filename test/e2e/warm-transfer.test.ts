import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../engine/audio/audio-frame.js";
import { PocketsphinxProvider } from "../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import type { SipCall } from "../../engine/transports/sip/sip-call.js";
import { SipUserAgent } from "../../engine/transports/sip/sip-user-agent.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { sendLikeAPhone } from "../helpers/phone-line.js";
import { SIP_HOST as HOST, startSipService } from "../helpers/sip-service.js";
import type { TestAccount, TestApp } from "../helpers/test-app.js";
import { until, untilValue } from "../helpers/until.js";

// Issue 31: a warm transfer over SIP. A caller (a SIP user agent over UDP on loopback) presses 0;
// the agent (transfer_mode warm) tells them to hold, calls the person at transfer_number through
// the SIP trunk (a second user agent standing in for the person's phone), tells the person what
// the call is about, then relays the two lines' audio to each other.

const NUMBER = "+14155550190";
const TRANSFER_TO = "+14155550100";
const HOLD_LINE = "Please hold while I connect you to our front desk.";

/** One side's line: the audio it receives, frame by frame, with when each arrived. */
class Ear {
  readonly frames: Array<{ at: number; samples: Int16Array }> = [];
  constructor(call: SipCall) {
    call.on("audio", (frame: AudioFrame) => this.frames.push({ at: Date.now(), samples: frame.samples }));
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

/** What the embedded recognizer hears in 8 kHz audio. */
async function recognise(samples: Int16Array): Promise<string> {
  const asr = new PocketsphinxProvider({ maxRecognizers: 1 });
  const session = await asr.open({ language: "en-US", signal: new AbortController().signal });
  async function* frames() {
    for (let i = 0; i < samples.length; i += 160) yield { samples: samples.subarray(i, i + 160), sampleRate: 8000 };
    // Trailing silence ends the last utterance.
    for (let i = 0; i < 50; i++) yield { samples: new Int16Array(160), sampleRate: 8000 };
  }
  const heard: string[] = [];
  for await (const result of session.transcribe(frames(), new AbortController().signal)) if (result.type === "final") heard.push(result.text);
  await session.close();
  await asr.close();
  return heard.join(" ");
}

let app: TestApp;
let acct: TestAccount;
let sipPort: number;
let caller: SipUserAgent;
let person: SipUserAgent;
const personCalls: SipCall[] = [];

beforeAll(async () => {
  // The person's phone, reached through the service's SIP trunk.
  person = await SipUserAgent.start({
    host: HOST,
    onInvite: (incoming) => void incoming.answer().then((call) => personCalls.push(call)),
  });
  ({ app, sipPort } = await startSipService("36000-36099", { PARLEY_SIP_TRUNK: `${HOST}:${person.port}` }));
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
  await caller?.close();
  await person?.close();
  await app?.close();
});

describe("a warm transfer over SIP", () => {
  it("calls the person, who hears what the call is about before the caller is put through; then both hear each other", async () => {
    const call = await caller.invite({ to: `sip:${NUMBER}@${HOST}:${sipPort}`, from: "sip:+14155550123@127.0.0.1" }).result;
    const connectedAt = Date.now();
    const callerEar = new Ear(call);
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

    // The person is called once the hold line has been said, and hears the briefing.
    const personCall = await untilValue("the person's phone to be called", () => personCalls[0], 20_000);
    const personEar = new Ear(personCall);
    const answeredAt = Date.now();
    await until("the briefing to be said", () => personEar.quietAfterVoice(answeredAt, 1000), 30_000);
    const briefedAt = Date.now();
    const briefing = await recognise(personEar.between(answeredAt, briefedAt));
    // "Hello, this is Desk from Acme Dental, with a caller for you. I am connecting you now.", as
    // the general model hears the agent's voice over the line ("...with the color for you...").
    expect(briefing).toMatch(/^hello this is .* for you/);
    // Meanwhile the caller heard the hold line and nothing of the briefing; their line stayed up, with no REFER.
    expect(await recognise(callerEar.between(asked, answeredAt))).toMatch(/hold/);
    expect(callerEar.voicedAfter(answeredAt + 500)).toBeUndefined();
    expect(referred).toBe(false);
    expect(callerHungUp).toBe(false);

    // Bridged: the person's words reach the caller, the caller's reach the person.
    const personSpoke = Date.now();
    await sendLikeAPhone(personCall, fixtureAudio("yes-please", 8), { thenSilenceMs: 200 });
    expect(callerEar.voicedAfter(personSpoke)).toBeDefined();
    expect(await recognise(callerEar.between(personSpoke, Date.now()))).toMatch(/yes/);
    const callerSpoke = Date.now();
    await sendLikeAPhone(call, fixtureAudio("opening-hours", 8), { thenSilenceMs: 200 });
    expect(await recognise(personEar.between(callerSpoke, Date.now()))).toMatch(/opening hours/);

    // The caller hangs up: the person's line is hung up too.
    const personHungUp = new Promise<void>((resolve) => personCall.once("hangup", () => resolve()));
    await call.hangUp();
    await personHungUp;

    // The call lasted until the bridge ended: its duration (and bill) covers the hold, the briefing and the bridge.
    const lasted = (Date.now() - connectedAt) / 1000;
    const stored = await untilValue("the call stored as transferred", async () => {
      const list = await app.request("GET", "/v1/calls?direction=inbound&status=transferred", { key: acct.key });
      return list.body.data.find((c: { from_number: string }) => c.from_number === "+14155550123");
    });
    expect(stored).toMatchObject({ phone_number: NUMBER, status: "transferred" });
    expect(stored.duration).toBeGreaterThanOrEqual(Math.floor(lasted) - 2);
  }, 90_000);
});
