import { afterAll, beforeAll, describe, expect, it } from "vitest";
import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { encodeMulaw } from "../../engine/audio/mulaw.js";
import { parseWav } from "../../engine/audio/wav.js";
import { serializeRtpPacket } from "../../engine/transports/sip/rtp-packet.js";
import { SipCallError } from "../../engine/transports/sip/sip-call.js";
import type { SipCall } from "../../engine/transports/sip/sip-call.js";
import { SipUserAgent } from "../../engine/transports/sip/sip-user-agent.js";
import { getTopVia } from "../../engine/transports/sip/sip-message.js";
import { EventsRepository } from "../../src/db/repositories/events.js";
import { sendLikeAPhone } from "../helpers/phone-line.js";
import { settledHeapBytes } from "../helpers/settled-heap.js";
import { freeUdpPort, startSipp } from "../helpers/sipp.js";
import { SIP_HOST as HOST, startSipService } from "../helpers/sip-service.js";
import { rawSipPeer, requestText } from "../helpers/sip-raw-peer.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Inbound SIP calls to the service: sipp (a real SIP peer) dials an owned number, plays RTP
// audio and hangs up; refusals are checked with a SIP user agent of our own over UDP.

const NUMBER = "+14155550177";
const GREETING = "Hello, thanks for calling Acme Dental. How can I help you today?";
const TRANSFERRING_NUMBER = "+14155550179";
const TRANSFER_TO = "+14155550100";
const ECHO_NUMBER = "+14155550176";
const PENDING_NUMBER = "+14155550175";
const FLOODED_NUMBER = "+14155550174";
const FIXTURES = fileURLToPath(new URL("../../fixtures/audio/", import.meta.url));

let app: TestApp;
let acct: TestAccount;
let sipPort: number;
let caller: SipUserAgent;

beforeAll(async () => {
  ({ app, sipPort } = await startSipService("30000-30999"));
  acct = await app.account({ credits: 100 });
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Front desk", system_prompt: "You answer calls for Acme Dental.", voice_id: "flite-kal", first_message: GREETING },
  });
  await app.activeNumber(acct.key, { phone_number: NUMBER, country: "US", default_agent_id: agent.body.id });
  await app.activeNumber(acct.key, { phone_number: "+14155550178", country: "US" });
  // Claimed through the API and never approved: not routed.
  const pending = await app.request("POST", "/v1/phone-numbers", { key: acct.key, body: { phone_number: PENDING_NUMBER, country: "US", default_agent_id: agent.body.id } });
  expect(pending.body.status).toBe("pending");
  const desk = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: {
      name: "Desk",
      system_prompt: "You answer calls for Acme Dental.",
      voice_id: "flite-kal",
      first_message: "Acme Dental, how can I help?",
      transfer_enabled: true,
      transfer_number: TRANSFER_TO,
      transfer_message: "Please hold while I transfer you to our front desk.",
    },
  });
  await app.activeNumber(acct.key, { phone_number: TRANSFERRING_NUMBER, country: "US", default_agent_id: desk.body.id });
  await app.activeNumber(acct.key, { phone_number: ECHO_NUMBER, country: "US", default_agent_id: agent.body.id });
  caller = await SipUserAgent.start({ host: HOST });
}, 60_000);

afterAll(async () => {
  await caller?.close();
  await app?.close();
});

/** Waits until the newest inbound call to `number` has ended, and returns it. */
async function endedCall(number: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const list = await app.request("GET", "/v1/calls?direction=inbound", { key: acct.key });
    const call = list.body.data.find((c: any) => c.phone_number === number);
    if (call && call.status !== "in_progress") return call;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ended inbound call to ${number}`);
}

/** Root-mean-square level of one channel of interleaved stereo samples. */
function channelLevel(samples: Int16Array, channel: number, from = 0, to = samples.length / 2): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += samples[i * 2 + channel]! * samples[i * 2 + channel]!;
  return Math.sqrt(sum / Math.max(1, to - from));
}

async function recording(call: any): Promise<ReturnType<typeof parseWav>> {
  const full = await app.request("GET", `/v1/calls/${call.id}?include=recording`, { key: acct.key });
  const link = new URL(full.body.recording_url);
  return parseWav(Buffer.from(await (await fetch(app.baseUrl + link.pathname + link.search)).arrayBuffer()));
}

/**
 * A call from `from` to the agent that transfers: `greeted` resolves once its greeting is over
 * (800 ms without agent audio), `referTo` is the REFER's target (accepted), `hungUp` its end.
 */
async function callTransferringNumber(from: string) {
  const call = await caller.invite({ to: `sip:${TRANSFERRING_NUMBER}@${HOST}:${sipPort}`, from }).result;
  let lastAgentAudio = 0;
  call.on("audio", (frame) => {
    let sum = 0;
    for (const s of frame.samples) sum += s * s;
    if (Math.sqrt(sum / frame.samples.length) > 300) lastAgentAudio = Date.now();
  });
  let target = "";
  call.on("refer", (refer) => {
    target = refer.target;
    void refer.notify(200, "OK");
  });
  const hungUp = new Promise<void>((resolve) => call.once("hangup", () => resolve()));
  const greeted = async () => {
    while (lastAgentAudio === 0 || Date.now() - lastAgentAudio < 800) await new Promise((r) => setTimeout(r, 50));
  };
  return { call, hungUp, greeted, referTo: () => target };
}

/**
 * What became of the inbound call from `from` (its status, end reason, transcript and events):
 * the message of an assertion on a call that went another way than the test expected.
 */
async function callStory(from: string): Promise<string> {
  const list = await app.request("GET", "/v1/calls?direction=inbound&limit=100", { key: acct.key });
  const call = list.body.data.find((c: any) => c.from_number === from);
  if (!call) return `no inbound call from ${from}`;
  const full = await app.request("GET", `/v1/calls/${call.id}?include=transcript,analysis,latency`, { key: acct.key });
  const events = await new EventsRepository(app.parley.services.db).forCall(call.id);
  return JSON.stringify({ call: full.body, events: events.map((e) => ({ name: e.name, data: e.data })) }, null, 1);
}

async function inviteOutcome(number: string): Promise<number> {
  const outgoing = caller.invite({ to: `sip:${number}@${HOST}:${sipPort}` });
  const error = await outgoing.result.then(
    (call) => {
      void call.hangUp();
      return null;
    },
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(SipCallError);
  return (error as SipCallError).status;
}

/**
 * A call from `caller` to `number` that streams silence (so whatever the agent hears from it is
 * silence) and counts the loud agent frames it receives (the greeting).
 */
async function silentCall(number: string, port = sipPort): Promise<{ call: SipCall; loudFrames: () => number; greeted: () => Promise<void>; hangUp: () => Promise<void> }> {
  const call = await caller.invite({ to: `sip:${number}@${HOST}:${port}` }).result;
  let loud = 0;
  let lastLoudAt = 0;
  call.on("audio", (frame) => {
    let sum = 0;
    for (const s of frame.samples) sum += s * s;
    if (Math.sqrt(sum / frame.samples.length) > 300) {
      loud++;
      lastLoudAt = Date.now();
    }
  });
  const silence = { samples: new Int16Array(160), sampleRate: 8000 };
  const streaming = setInterval(() => call.sendAudio(silence), 20);
  return {
    call,
    loudFrames: () => loud,
    // The greeting is over: 800 ms without agent audio after some.
    greeted: async () => {
      while (lastLoudAt === 0 || Date.now() - lastLoudAt < 800) await new Promise((r) => setTimeout(r, 50));
    },
    hangUp: async () => {
      clearInterval(streaming);
      await call.hangUp();
    },
  };
}

describe("inbound SIP", () => {
  it("answers sipp's call to an owned number with its default agent: transcript, recording, duration, credits", async () => {
    const sipp = await startSipp([`${HOST}:${sipPort}`, "-sn", "uac_pcap", "-s", NUMBER.slice(1), "-m", "1", "-i", HOST, "-p", String(await freeUdpPort()), "-mp", String(await freeUdpPort())]);
    try {
      const exit = await sipp.exited;
      expect(exit.code, exit.output).toBe(0);
    } finally {
      await sipp.cleanup();
    }
    const call = await endedCall(NUMBER);
    expect(call).toMatchObject({ direction: "inbound", status: "completed", phone_number: NUMBER });
    expect(call.duration).toBeGreaterThan(0);
    const full = await app.request("GET", `/v1/calls/${call.id}?include=transcript,recording`, { key: acct.key });
    // The agent greeted over RTP; sipp's recorded speech (g711a.pcap) talks over it, so the
    // greeting may be cut where the caller barged in: the transcript keeps what was played.
    const [first] = full.body.transcript;
    expect(first.role).toBe("agent");
    expect(first.content.length).toBeGreaterThan(10);
    expect(GREETING.startsWith(first.content)).toBe(true);
    // The recording (caller left, agent right) holds both sides' audio.
    const wav = await recording(call);
    expect(wav.channels).toBe(2);
    expect(channelLevel(wav.samples, 0), "caller channel").toBeGreaterThan(100);
    expect(channelLevel(wav.samples, 1), "agent channel").toBeGreaterThan(100);
    const row = await app.parley.services.db.selectFrom("calls").select(["billed_credits"]).where("id", "=", call.id).executeTakeFirstOrThrow();
    expect(row.billed_credits).toBe(Math.ceil(call.duration / 60));
    const account = await app.request("GET", "/v1/account", { key: acct.key });
    expect(account.body.credit_balance).toBe(100 - row.billed_credits!);
    const emitted = await new EventsRepository(app.parley.services.db).forCall(call.id);
    expect(emitted.map((e) => e.name)).toEqual(["call.started", "call.answered", "call.completed", "call.transcript.ready", "call.recording.ready"]);
    expect(emitted[2]!.data).toMatchObject({ direction: "inbound", phone_number: NUMBER, duration_seconds: call.duration });
  }, 90_000);

  it("answers concurrent calls: four sipp calls at once, each completed with its own transcript and charge", async () => {
    const before = new Set((await app.request("GET", "/v1/calls?direction=inbound&limit=100", { key: acct.key })).body.data.map((c: any) => c.id));
    const sipp = await startSipp([`${HOST}:${sipPort}`, "-sn", "uac_pcap", "-s", NUMBER.slice(1), "-m", "4", "-l", "4", "-r", "20", "-i", HOST, "-p", String(await freeUdpPort()), "-mp", String(await freeUdpPort())]);
    try {
      const exit = await sipp.exited;
      expect(exit.code, exit.output).toBe(0);
    } finally {
      await sipp.cleanup();
    }
    let calls: any[] = [];
    for (let i = 0; i < 100; i++) {
      calls = (await app.request("GET", "/v1/calls?direction=inbound&limit=100", { key: acct.key })).body.data.filter((c: any) => !before.has(c.id));
      if (calls.length === 4 && calls.every((c) => c.status !== "in_progress")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(calls).toHaveLength(4);
    for (const call of calls) {
      expect(call).toMatchObject({ status: "completed", phone_number: NUMBER });
      const full = await app.request("GET", `/v1/calls/${call.id}?include=transcript`, { key: acct.key });
      // sipp's pcap sound starts with the call: the agent may pause its greeting for it (barge-in), so
      // the first line is not always the agent's, but the agent spoke on each call.
      expect(full.body.transcript.some((s: any) => s.role === "agent")).toBe(true);
      const row = await app.parley.services.db.selectFrom("calls").select(["billed_credits"]).where("id", "=", call.id).executeTakeFirstOrThrow();
      expect(row.billed_credits).toBe(Math.ceil(call.duration / 60));
    }
  }, 90_000);

  it("is heard by sipp: with -rtp_echo sipp returns every RTP packet it receives, so the caller channel carries the agent's greeting back", async () => {
    // sipp's built-in uac sends no audio of its own here: whatever reaches the caller channel
    // is the agent's RTP that sipp received and echoed.
    const sipp = await startSipp([`${HOST}:${sipPort}`, "-sn", "uac", "-s", ECHO_NUMBER.slice(1), "-m", "1", "-d", "5000", "-rtp_echo", "-i", HOST, "-p", String(await freeUdpPort()), "-mp", String(await freeUdpPort())]);
    try {
      const exit = await sipp.exited;
      expect(exit.code, exit.output).toBe(0);
    } finally {
      await sipp.cleanup();
    }
    const call = await endedCall(ECHO_NUMBER);
    expect(call).toMatchObject({ status: "completed" });
    const wav = await recording(call);
    // The first second of the greeting, on both channels: the echo arrives within a packet or two.
    const agent = channelLevel(wav.samples, 1, 0, wav.sampleRate);
    const echoed = channelLevel(wav.samples, 0, 0, wav.sampleRate);
    expect(agent, "agent channel").toBeGreaterThan(300);
    expect(echoed, "caller channel (sipp's echo)").toBeGreaterThan(agent / 4);
  }, 60_000);

  it("refuses unknown and pending numbers with 404 and numbers without a default agent with 480", async () => {
    expect(await inviteOutcome("+14155550999")).toBe(404);
    expect(await inviteOutcome(PENDING_NUMBER)).toBe(404);
    expect(await inviteOutcome("+14155550178")).toBe(480);
  }, 30_000);

  it("hands a caller who asks for a human to transfer_number with a REFER; the call ends transferred", async () => {
    const { call, hungUp, greeted, referTo } = await callTransferringNumber("+14155550111");
    // After the greeting, say "can i speak to a human please" in real time.
    await greeted();
    // A G.711 phone keeps sending packets, silence included, until the call ends.
    const speech = parseWav(readFileSync(`${FIXTURES}speak-to-human.8k.wav`)).samples;
    let ended = false;
    void hungUp.then(() => (ended = true));
    await sendLikeAPhone(call, speech, { thenSilenceMs: 20_000, until: () => ended });
    await hungUp;
    expect(referTo(), await callStory("+14155550111")).toMatch(new RegExp(`^<?sip:\\${TRANSFER_TO}@`));
    const list = await app.request("GET", "/v1/calls?direction=inbound&status=transferred", { key: acct.key });
    const transferred = list.body.data.find((c: any) => c.from_number === "+14155550111");
    expect(transferred).toMatchObject({ phone_number: TRANSFERRING_NUMBER });
    const full = await app.request("GET", `/v1/calls/${transferred.id}?include=transcript`, { key: acct.key });
    expect(full.body.transcript.map((s: any) => s.content).join(" ")).toMatch(/transfer you to our front desk/);
    const emitted = await new EventsRepository(app.parley.services.db).forCall(transferred.id);
    expect(emitted.find((e) => e.name === "call.transferred")?.data).toMatchObject({ transfer_number: TRANSFER_TO, outcome: "transferred" });
  }, 60_000);

  it("transfers a caller who presses 0 (RFC 4733) after the greeting, as it does one who asks for a person", async () => {
    const { call, hungUp, greeted, referTo } = await callTransferringNumber("+14155550112");
    let ended = false;
    void hungUp.then(() => (ended = true));
    // A phone sends packets (silence) all along; the key goes once the greeting is over.
    const silence = sendLikeAPhone(call, new Int16Array(0), { thenSilenceMs: Infinity, until: () => ended });
    await greeted();
    await call.sendDtmf("0");
    await hungUp;
    await silence;
    expect(referTo(), await callStory("+14155550112")).toMatch(new RegExp(`^<?sip:\\${TRANSFER_TO}@`));
    const list = await app.request("GET", "/v1/calls?direction=inbound&status=transferred", { key: acct.key });
    const transferred = list.body.data.find((c: any) => c.from_number === "+14155550112");
    const full = await app.request("GET", `/v1/calls/${transferred.id}?include=transcript,analysis`, { key: acct.key });
    expect(full.body.transcript.filter((s: any) => s.role === "user").map((s: any) => s.content)).toEqual(["[pressed 0]"]);
    expect(full.body.analysis).toMatchObject({ outcome: "transferred" });
  }, 60_000);

  it("a stranger's RTP flood at a live call's port is dropped unread: the agent hears only its caller, says its whole greeting, and the heap does not grow", async () => {
    const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: "p", voice_id: "flite-kal", first_message: GREETING } });
    await app.activeNumber(acct.key, { phone_number: FLOODED_NUMBER, country: "US", default_agent_id: agent.body.id });
    const { call, loudFrames, greeted, hangUp } = await silentCall(FLOODED_NUMBER);
    const parleyRtp = call.rtp.remoteAddress!;
    const stranger = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => stranger.bind(0, "127.0.0.2", resolve));
    const heapBefore = settledHeapBytes();
    try {
      // Loud audio from another address, as a stranger spraying the RTP range would send it.
      const FLOOD = 30_000;
      for (let i = 0; i < FLOOD; i += 100) {
        const sent: Promise<void>[] = [];
        for (let j = i; j < i + 100; j++) {
          const packet = serializeRtpPacket({ marker: false, payloadType: 0, sequence: j & 0xffff, timestamp: j * 160, ssrc: 0x5eed, csrcs: [], payload: encodeMulaw(new Int16Array(160).fill(20000)) });
          sent.push(new Promise((resolve) => stranger.send(packet, parleyRtp.port, parleyRtp.address, () => resolve())));
        }
        await Promise.all(sent);
        await new Promise((r) => setTimeout(r, 2));
      }
      const [served] = app.parley.media!.sip!.userAgent.liveCalls;
      // Most of the flood reached the call's socket (loopback may drop some) and all of it was ignored.
      expect(served!.rtp.stats.ignored).toBeGreaterThan(FLOOD / 2);
      expect(served!.rtp.remoteAddress).toEqual({ address: HOST, port: call.rtp.localPort });
      expect(settledHeapBytes() - heapBefore).toBeLessThan(16 * 1024 * 1024);
      await greeted();
    } finally {
      await new Promise<void>((resolve) => stranger.close(() => resolve()));
      await hangUp();
    }
    expect(loudFrames()).toBeGreaterThan(50);
    const ended = await endedCall(FLOODED_NUMBER);
    const full = await app.request("GET", `/v1/calls/${ended.id}?include=transcript`, { key: acct.key });
    expect(full.body.transcript).toEqual([expect.objectContaining({ role: "agent", content: GREETING })]);
    // What the agent heard (the recording's caller channel) is its caller's silence, not the stranger's tone.
    const wav = await recording(ended);
    expect(channelLevel(wav.samples, 0), "caller channel").toBeLessThan(50);
    expect(channelLevel(wav.samples, 1), "agent channel").toBeGreaterThan(100);
  }, 60_000);

  it("refuses calls past the account's concurrent-call limit with 486, and without credits with 402", async () => {
    const limited = await app.account({ credits: 100 });
    await app.parley.services.accounts.setLimits(limited.id, { concurrentCalls: 1 });
    const broke = await app.account({ credits: 0 });
    for (const [who, number] of [
      [limited, "+14155550171"],
      [broke, "+14155550172"],
    ] as const) {
      const agent = await app.request("POST", "/v1/agents", { key: who.key, body: { name: "Desk", system_prompt: "You answer calls.", voice_id: "flite-kal" } });
      await app.activeNumber(who.key, { phone_number: number, country: "US", default_agent_id: agent.body.id });
    }
    expect(await inviteOutcome("+14155550172")).toBe(402);
    const first = await caller.invite({ to: `sip:+14155550171@${HOST}:${sipPort}` }).result;
    try {
      expect(await inviteOutcome("+14155550171")).toBe(486);
    } finally {
      await first.hangUp();
    }
  }, 30_000);

  it("refuses new calls with 503 once shutting down", async () => {
    app.parley.media!.sip!.stopAccepting();
    expect(await inviteOutcome(NUMBER)).toBe(503);
  }, 30_000);
});

describe("inbound SIP from a source outside PARLEY_SIP_ALLOW", () => {
  it("is refused with one stateless 403 per INVITE: a flood leaves no transaction or call behind", async () => {
    const port = await freeUdpPort(HOST);
    const strict = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_SIP_PORT: String(port), PARLEY_SIP_HOST: HOST, PARLEY_SIP_ALLOW: "10.0.0.0/8" });
    const flooder = await rawSipPeer();
    try {
      const outgoing = caller.invite({ to: `sip:${NUMBER}@${HOST}:${port}` });
      const error = await outgoing.result.catch((err: unknown) => err);
      expect((error as SipCallError).status).toBe(403);
      // In bursts of 50, so loopback's socket buffers never overflow and drop datagrams.
      const FLOOD = 500;
      for (let i = 0; i < FLOOD; i += 50) {
        for (let j = i; j < i + 50; j++) flooder.send(requestText(flooder.port, `z9hG4bKflood${j}`, { user: NUMBER.slice(1) }), port);
        await flooder.received(i + 50);
      }
      const ua = strict.parley.media!.sip!.userAgent;
      expect(ua.layer.size).toBe(0);
      expect(ua.activeCalls).toBe(0);
      expect(flooder.responses.every((r) => r.response.status === 403)).toBe(true);
      expect(new Set(flooder.responses.map((r) => getTopVia(r.response).params.branch)).size).toBe(FLOOD);
      expect(flooder.responses.reduce((sum, r) => sum + r.bytes, 0)).toBeLessThanOrEqual(flooder.sentBytes);
    } finally {
      await flooder.close();
      await strict.close();
    }
  }, 60_000);
});

describe("inbound SIP: an INVITE flood from an allowed source", () => {
  it("gets 486 (the account's call limit) then stateless 503 (the transaction cap), holds no more than the caps, and the live call keeps its audio", async () => {
    const MAX_TRANSACTIONS = 200;
    const BUSY_NUMBER = "+14155550170";
    const { app: busyApp, sipPort: port } = await startSipService("34000-34099", { PARLEY_SIP_MAX_TRANSACTIONS: String(MAX_TRANSACTIONS) });
    // The flooder keeps only each INVITE's final status (the test shares the service's heap, which is measured).
    const flooder = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => flooder.bind(0, HOST, resolve));
    const finals = new Map<string, number>();
    let answered: () => void = () => undefined;
    flooder.on("message", (data) => {
      const text = data.toString("latin1");
      const status = Number(/^SIP\/2\.0 (\d{3})/.exec(text)?.[1]);
      const branch = /;branch=([^;\s]+)/.exec(text)?.[1];
      if (status >= 200 && branch) finals.set(branch, status);
      answered();
    });
    try {
      const busy = await busyApp.account({ credits: 100 });
      await busyApp.parley.services.accounts.setLimits(busy.id, { concurrentCalls: 1 });
      const agent = await busyApp.request("POST", "/v1/agents", { key: busy.key, body: { name: "Front desk", system_prompt: "p", voice_id: "flite-kal", first_message: GREETING } });
      await busyApp.activeNumber(busy.key, { phone_number: BUSY_NUMBER, country: "US", default_agent_id: agent.body.id });
      // The account's one call, live while the flood comes.
      const { loudFrames, greeted, hangUp } = await silentCall(BUSY_NUMBER, port);
      const ua = busyApp.parley.media!.sip!.userAgent;

      let heldMost = 0;
      /** `count` INVITEs to the busy number in bursts of 50 (loopback's buffers then drop none), each burst answered before the next. */
      const wave = async (first: number, count: number) => {
        for (let i = first; i < first + count; i += 50) {
          const from = flooder.address().port;
          for (let j = i; j < i + 50; j++) flooder.send(requestText(from, `z9hG4bKinv${j}`, { user: BUSY_NUMBER.slice(1) }).replace(/\r?\n/g, "\r\n"), port, HOST);
          // Like a UA's Timer A: INVITEs (or answers) lost on a loaded loopback are sent again, same branch.
          while (finals.size < i + 50) {
            const more = await new Promise<boolean>((resolve) => {
              answered = () => resolve(true);
              setTimeout(() => resolve(false), 500);
            });
            if (!more) for (let j = i; j < i + 50; j++) if (!finals.has(`z9hG4bKinv${j}`)) flooder.send(requestText(from, `z9hG4bKinv${j}`, { user: BUSY_NUMBER.slice(1) }).replace(/\r?\n/g, "\r\n"), port, HOST);
          }
          heldMost = Math.max(heldMost, ua.layer.size);
        }
      };
      const WAVE = 1500;
      await wave(0, WAVE);
      const heapAfterFirst = settledHeapBytes();
      await wave(WAVE, WAVE);
      const heapAfterSecond = settledHeapBytes();

      const statuses = [...finals.values()];
      expect(statuses).toHaveLength(2 * WAVE);
      expect(statuses.every((s) => s === 486 || s === 503)).toBe(true);
      // A 486 holds its transaction until its ACK (never sent) or 32 s: at most the cap's worth of them; the rest were refused with no state at all.
      const busyHere = statuses.filter((s) => s === 486).length;
      expect(busyHere).toBeGreaterThan(0);
      expect(busyHere).toBeLessThanOrEqual(MAX_TRANSACTIONS);
      expect(heldMost).toBeLessThanOrEqual(MAX_TRANSACTIONS);
      expect(ua.heldState).toEqual({ calls: 1, acks: 0, pending: 0 });
      // The second wave, all refused statelessly, left the heap where the first did.
      expect(heapAfterSecond - heapAfterFirst).toBeLessThan(4 * 1024 * 1024);
      // No call was made for the flood: only the live one is stored.
      expect(await busyApp.parley.services.db.selectFrom("calls").select("id").where("account_id", "=", busy.id).execute()).toHaveLength(1);

      // The live call said its whole greeting over it all.
      await greeted();
      await hangUp();
      expect(loudFrames()).toBeGreaterThan(50);
      let row;
      for (let i = 0; i < 100 && row?.status !== "completed"; i++) {
        row = await busyApp.parley.services.db.selectFrom("calls").selectAll().where("account_id", "=", busy.id).executeTakeFirstOrThrow();
        if (row.status !== "completed") await new Promise((r) => setTimeout(r, 100));
      }
      expect(row, JSON.stringify(row)).toMatchObject({ status: "completed", end_reason: "caller_hangup" });
      expect(JSON.parse(row!.transcript!)).toEqual([expect.objectContaining({ role: "agent", content: GREETING })]);
    } finally {
      await new Promise<void>((resolve) => flooder.close(() => resolve()));
      await busyApp.close();
    }
  }, 90_000);
});
