import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AudioFrame } from "../../engine/audio/audio-frame.js";
import { parseWav } from "../../engine/audio/wav.js";
import { SipUserAgent } from "../../engine/transports/sip/sip-user-agent.js";
import { sendLikeAPhone } from "../helpers/phone-line.js";
import { SIP_HOST as HOST, startSipService } from "../helpers/sip-service.js";
import type { TestAccount, TestApp } from "../helpers/test-app.js";

// A caller whose phone suppresses silence (DTX): it sends RTP only while its user speaks, and
// nothing at all before, between or after. The service must still hear the end of the caller's
// turn (its playout clock fills the pauses with silence) and reply.

const NUMBER = "+14155550181";
const GREETING = "Hello, thanks for calling Acme Dental. How can I help you today?";
const FIXTURES = fileURLToPath(new URL("../../fixtures/audio/", import.meta.url));
/** How long the agent gets to answer once the caller has stopped: generous, this is not a benchmark. */
const REPLY_WAIT_MS = 15_000;

let app: TestApp;
let acct: TestAccount;
let sipPort: number;
let caller: SipUserAgent;

beforeAll(async () => {
  ({ app, sipPort } = await startSipService("32000-32999"));
  acct = await app.account({ credits: 100 });
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Front desk", system_prompt: "You book appointments for Acme Dental.", voice_id: "flite-kal", first_message: GREETING },
  });
  await app.activeNumber(acct.key, { phone_number: NUMBER, country: "US", default_agent_id: agent.body.id });
  caller = await SipUserAgent.start({ host: HOST });
}, 60_000);

afterAll(async () => {
  await caller?.close();
  await app?.close();
});

const rms = (samples: Int16Array) => Math.sqrt(samples.reduce((sum, s) => sum + s * s, 0) / samples.length);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The fixture's speech without the trailing quiet a DTX phone would not send. */
function spokenLine(name: string): Int16Array {
  const samples = parseWav(readFileSync(`${FIXTURES}${name}.8k.wav`)).samples;
  let end = samples.length;
  while (end > 0 && Math.abs(samples[end - 1]!) < 100) end--;
  return samples.subarray(0, end);
}

/** Per 20 ms of one channel of an interleaved stereo recording: whether it is loud. */
function loudWindows(samples: Int16Array, channel: number, sampleRate: number): boolean[] {
  const window = (sampleRate * 20) / 1000;
  const loud: boolean[] = [];
  for (let start = 0; start + window * 2 <= samples.length; start += window * 2) {
    const mono = new Int16Array(window);
    for (let i = 0; i < window; i++) mono[i] = samples[start + i * 2 + channel]!;
    loud.push(rms(mono) > 300);
  }
  return loud;
}

describe("inbound SIP from a phone that suppresses silence", () => {
  it("ends the caller's turn and replies though no packets come after the speech; the recording keeps both sides in line", async () => {
    const call = await caller.invite({ to: `sip:${NUMBER}@${HOST}:${sipPort}`, from: "+14155550112" }).result;
    let lastAgentAudio = 0;
    call.on("audio", (frame: AudioFrame) => {
      if (rms(frame.samples) > 300) lastAgentAudio = Date.now();
    });
    // The greeting plays while the phone sends nothing; the caller speaks once it is over.
    while (lastAgentAudio === 0 || Date.now() - lastAgentAudio < 800) await sleep(50);

    const speech = spokenLine("book-appointment");
    await sendLikeAPhone(call, speech);
    // From here on the phone sends no packets at all.
    const stoppedAt = Date.now();
    while (lastAgentAudio < stoppedAt && Date.now() - stoppedAt < REPLY_WAIT_MS) await sleep(50);
    expect(lastAgentAudio, "the agent replied after the caller stopped").toBeGreaterThan(stoppedAt);
    while (Date.now() - lastAgentAudio < 800) await sleep(50); // let the reply finish
    await call.hangUp();

    let row: any;
    for (let i = 0; i < 100; i++) {
      row = (await app.request("GET", `/v1/calls?direction=inbound`, { key: acct.key })).body.data.find((c: any) => c.phone_number === NUMBER);
      if (row && row.status !== "in_progress") break;
      await sleep(100);
    }
    expect(row).toMatchObject({ direction: "inbound", status: "completed", phone_number: NUMBER });
    const full = await app.request("GET", `/v1/calls/${row.id}?include=transcript,recording`, { key: acct.key });
    const roles = full.body.transcript.map((s: any) => s.role);
    expect(roles.slice(0, 3)).toEqual(["agent", "user", "agent"]);
    expect(full.body.transcript[0].content).toBe(GREETING);
    expect(full.body.transcript[2].content.length).toBeGreaterThan(0);

    // Caller left, agent right. The caller's side counts the silence the phone never sent, so
    // its speech lands after the greeting and before the reply, not on top of the greeting.
    const link = new URL(full.body.recording_url);
    const wav = parseWav(Buffer.from(await (await fetch(app.baseUrl + link.pathname + link.search)).arrayBuffer()));
    const callerLoud = loudWindows(wav.samples, 0, wav.sampleRate);
    const agentLoud = loudWindows(wav.samples, 1, wav.sampleRate);
    expect(callerLoud.filter(Boolean).length).toBeGreaterThan(25);
    const overlap = callerLoud.filter((loud, i) => loud && agentLoud[i]).length;
    expect(overlap, "windows where both sides are loud").toBe(0);
    const callerFirst = callerLoud.indexOf(true);
    expect(agentLoud.slice(0, callerFirst).filter(Boolean).length, "greeting before the caller").toBeGreaterThan(50);
    expect(agentLoud.slice(callerLoud.lastIndexOf(true)).some(Boolean), "reply after the caller").toBe(true);
  }, 60_000);
});

describe("inbound SIP from a phone that went away without a BYE", () => {
  it("is hung up after PARLEY_RTP_TIMEOUT_MS without a packet: BYE sent, the call completed and billed", async () => {
    const { app: strict, sipPort: port } = await startSipService("33000-33999", { PARLEY_RTP_TIMEOUT_MS: "1500" });
    try {
      const who = await strict.account({ credits: 10 });
      const agent = await strict.request("POST", "/v1/agents", { key: who.key, body: { name: "Desk", system_prompt: "You answer calls.", voice_id: "flite-kal", first_message: GREETING } });
      await strict.activeNumber(who.key, { phone_number: NUMBER, country: "US", default_agent_id: agent.body.id });
      // Our phone answers nothing and sends no RTP at all, as one whose network dropped.
      const call = await caller.invite({ to: `sip:${NUMBER}@${HOST}:${port}` }).result;
      const reason = await new Promise<string>((resolve) => call.once("hangup", resolve));
      expect(reason).toBe("remote_hangup");
      let row: any;
      for (let i = 0; i < 50 && row?.status !== "completed"; i++) {
        await sleep(100);
        row = (await strict.request("GET", "/v1/calls?direction=inbound", { key: who.key })).body.data[0];
      }
      expect(row).toMatchObject({ status: "completed", phone_number: NUMBER });
      expect(row.duration).toBeLessThan(10);
      expect((await strict.request("GET", "/v1/account", { key: who.key })).body.credit_balance).toBe(9);
    } finally {
      await strict.close();
    }
  }, 60_000);
});
