import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import { defaultCallCapacity } from "../../engine/call-capacity.js";
import { defaultFliteWorkers } from "../../engine/providers/tts/flite/flite-tts.js";
import { defaultRecognizerCount } from "../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { openDatabase } from "../../src/db/database.js";
import { databaseFile } from "../../src/main.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { NativeMediaClient, TwilioMediaClient, type MediaClient } from "../helpers/media-client.js";
import { scrapeMetrics } from "../helpers/prometheus-text.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";


const GREETING = "Hello, thanks for calling Acme Dental. How can I help you today?";
const BOOKING_LINES = ["book-appointment", "service-cleaning", "day-and-time", "my-name", "yes-please"];

/** The next Tuesday after today (UTC), as the rules dialogue resolves "tuesday". */
function nextTuesday(): string {
  const d = new Date();
  const ahead = ((2 - d.getUTCDay() + 7) % 7) || 7;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + ahead)).toISOString().slice(0, 10);
}

let app: TestApp;
let acct: TestAccount;
let agentId: string;
let wsBase: string;
/** The account's media token for /media/twilio, as the rotation showed it. */
let mediaToken: string;
let secondAgentId: string;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" });
  wsBase = app.baseUrl.replace(/^http/, "ws");
  acct = await app.account({ credits: 100 });
  const newAgent = async (name: string, settings: Record<string, unknown> = {}) => {
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: {
        name,
        system_prompt: "You book appointments for Acme Dental.",
        voice_id: "flite-slt",
        first_message: GREETING,
        metadata: { business_name: "Acme Dental", services: ["cleaning", "checkup"] },
        ...settings,
      },
    });
    expect(agent.status).toBe(201);
    return agent.body.id as string;
  };
  agentId = await newAgent("Acme front desk");
  // The two booking calls below ask for the same time: each books in its own agent's calendar.
  // The first agent ends turns adaptively (the default), the second after a fixed 500 ms.
  secondAgentId = await newAgent("Acme second desk", { endpointing_mode: "fixed" });
  const rotated = await app.request("POST", "/v1/account/media-token/rotate", { key: acct.key });
  expect(rotated.status).toBe(200);
  mediaToken = rotated.body.media_token;
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** Plays the booking conversation line by line, each after the agent has finished speaking. */
async function bookingConversation(client: MediaClient, rate: 8 | 16): Promise<void> {
  client.startStreaming();
  await client.waitForAgentSilence();
  for (const line of BOOKING_LINES) {
    const saidAt = await client.say(fixtureAudio(line, rate));
    await client.waitForAgentSilence(900, saidAt);
  }
}

async function waitForCallEnd(callId: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const res = await app.request("GET", `/v1/calls/${callId}?include=transcript,recording`, { key: acct.key });
    if (!["queued", "ringing", "in_progress"].includes(res.body.status)) return res.body;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`call ${callId} did not end`);
}

async function checkBooking(callId: string): Promise<void> {
  const call = await waitForCallEnd(callId);
  expect(call.status).toBe("completed");
  expect(call.duration).toBeGreaterThan(5);
  const user = call.transcript.filter((s: any) => s.role === "user").map((s: any) => s.content).join(" | ");
  const agent = call.transcript.filter((s: any) => s.role === "agent").map((s: any) => s.content);
  expect(agent[0]).toBe(GREETING);
  expect(user).toMatch(/appointment/);
  expect(user).toMatch(/john smith/);
  expect(call.transcript.every((s: any, i: number, all: any[]) => i === 0 || s.timestamp >= all[i - 1].timestamp)).toBe(true);

  const appointments = await app.request("GET", `/v1/appointments?call_id=${callId}`, { key: acct.key });
  expect(appointments.body.total).toBe(1);
  expect(appointments.body.data[0]).toMatchObject({ date: nextTuesday(), time: "15:00", service: expect.stringMatching(/cleaning/i), customer_name: expect.stringMatching(/john smith/i) });

  const row = await app.parley.services.db.selectFrom("calls").select(["recording_path", "duration", "billed_credits"]).where("id", "=", callId).executeTakeFirstOrThrow();
  expect(row.recording_path).toBeTruthy();
  expect(existsSync(row.recording_path!)).toBe(true);
  // Recordings are the caller's voice: readable by the service's user only.
  expect(statSync(row.recording_path!).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(row.recording_path!)).mode & 0o777).toBe(0o700);
  const wav = parseWav(readFileSync(row.recording_path!));
  expect(wav.channels).toBe(2);
  // The call's signed recording link serves that file without an API key.
  const link = new URL(call.recording_url);
  const served = await fetch(app.baseUrl + link.pathname + link.search);
  expect(served.status).toBe(200);
  expect(Buffer.from(await served.arrayBuffer()).equals(readFileSync(row.recording_path!))).toBe(true);
  const seconds = wav.samples.length / 2 / wav.sampleRate;
  expect(Math.abs(seconds - row.duration!)).toBeLessThan(2);
  expect(row.billed_credits).toBe(Math.ceil(row.duration! / 60));
}

// The two booking conversations run side by side (two calls at once, as the service serves
// them): each takes ~45 s of real-time audio. One agent is adaptive, the other fixed.
describe("booking calls over both protocols at once", () => {
  it.concurrent("native (adaptive endpointing): greets, books an appointment from recorded caller audio, records and bills the call", async () => {
    const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key, 16000);
    const connected = await client.waitFor((m) => m.type === "connected");
    expect(connected).toMatchObject({ format: "pcm16", sample_rate: 16000 });
    await bookingConversation(client, 16);
    const transcripts = client.messages.filter((m) => m.message.type === "transcript");
    expect(transcripts.length).toBeGreaterThanOrEqual(6);
    expect(client.messages.some((m) => m.message.type === "tool_call" && m.message.name === "book_appointment")).toBe(true);
    const metrics = client.messages.filter((m) => m.message.type === "turn_metrics").map((m) => m.message);
    expect(metrics.some((m) => m.voice_to_voice_ms !== null && m.asr_final_at !== null)).toBe(true);
    client.close();
    await checkBooking(connected.call_id);
  }, 120_000);

  it.concurrent("twilio (fixed endpointing): books an appointment from 8 kHz mu-law audio", async () => {
    const client = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, agent_id: secondAgentId });
    await bookingConversation(client, 8);
    client.hangUp();
    await client.closed;
    const calls = await app.parley.services.db.selectFrom("calls").select("id").where("metadata", "like", `%${client.callSid}%`).execute();
    expect(calls).toHaveLength(1);
    await checkBooking(calls[0]!.id);
  }, 120_000);
});

describe("metrics after the booking calls", () => {
  it("counted both calls by transport and status, timed their turns by stage, and the live gauge and pools are back to 0", async () => {
    // A call's end is counted just after it is stored: wait for the gauge rather than the row.
    let m = await scrapeMetrics(app.baseUrl);
    for (let i = 0; i < 100 && m.value("parley_calls_live", { transport: "native" }) + m.value("parley_calls_live", { transport: "twilio" }) > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      m = await scrapeMetrics(app.baseUrl);
    }
    for (const transport of ["native", "twilio"]) {
      expect(m.value("parley_calls_started_total", { transport }), transport).toBe(1);
      expect(m.value("parley_calls_ended_total", { transport, status: "completed" }), transport).toBe(1);
      expect(m.value("parley_calls_live", { transport }), transport).toBe(0);
    }
    // Five caller lines per call, each answered: every stage of those turns is timed.
    for (const stage of ["endpointing", "asr", "first_token", "first_audio", "voice_to_voice"]) {
      expect(m.value("parley_turn_latency_seconds_count", { stage }), stage).toBeGreaterThanOrEqual(10);
      expect(m.value("parley_turn_latency_seconds_bucket", { stage, le: "+Inf" }), stage).toBe(m.value("parley_turn_latency_seconds_count", { stage }));
    }
    // PARLEY_ASR_RECOGNIZERS and PARLEY_CALL_CAPACITY are 0 by default: derived from this machine.
    expect(m.value("parley_pool_capacity", { pool: "recognizers" })).toBe(defaultRecognizerCount());
    expect(m.value("parley_pool_capacity", { pool: "tts_workers" })).toBe(defaultFliteWorkers());
    expect(m.value("parley_pool_capacity", { pool: "call_slots" })).toBe(defaultCallCapacity(false));
    for (const pool of ["recognizers", "tts_workers", "call_slots"]) expect(m.value("parley_pool_in_use", { pool }), pool).toBe(0);
    expect(m.value("parley_barge_ins_total", { transport: "native" })).toBe(0);
  });
});

describe("a call over the native WebSocket protocol", () => {
  it("refuses upgrades without a valid key or agent, in the error envelope", async () => {
    await expect(NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, "sk_parley_wrong")).rejects.toMatchObject({ status: 401 });
    await expect(NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=agent_nope`, acct.key)).rejects.toMatchObject({
      status: 404,
      body: { error: { code: "agent_not_found" } },
    });
    await expect(NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}&sample_rate=11025`, acct.key)).rejects.toMatchObject({ status: 400 });
  });
});

describe("ending a live call from the API", () => {
  it("POST /v1/calls/{id}/end hangs up, stores the call and closes the socket", async () => {
    const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key);
    const { call_id: callId } = await client.waitFor((m) => m.type === "connected");
    client.startStreaming();
    await client.waitForAgentSilence();
    const live = await app.request("GET", `/v1/calls/${callId}`, { key: acct.key });
    expect(live.body).toMatchObject({ status: "in_progress", direction: "web", phone_number: null });
    const ended = await app.request("POST", `/v1/calls/${callId}/end`, { key: acct.key });
    expect(ended.status).toBe(200);
    expect(ended.body.status).toBe("completed");
    expect(ended.body.duration).toBeGreaterThan(0);
    await client.closed;
    expect(client.messages.some((m) => m.message.type === "ended" && m.message.reason === "stopped")).toBe(true);
    const again = await app.request("POST", `/v1/calls/${callId}/end`, { key: acct.key });
    expect(again.body.error.code).toBe("call_already_ended");
  }, 60_000);
});

describe("a call over Twilio Media Streams", () => {
  it("routes a stream by its dialled number (To) to the number's default agent, as an inbound call", async () => {
    const number = await app.request("POST", "/v1/phone-numbers", {
      key: acct.key,
      body: { phone_number: "+14155550177", country: "US", default_agent_id: agentId },
    });
    expect(number.body.status).toBe("pending");
    // Claimed through the API, the number routes nothing until the operator approves it.
    const early = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, To: "+14155550177" });
    await early.closed;
    expect(early.closeCode).toBe(1008);
    expect(early.closeReason).toContain("+14155550177");
    await app.approveNumber(number.body.id);
    const client = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, To: "+14155550177", From: "+14155550999" });
    client.startStreaming();
    await client.waitForAgentSilence();
    client.hangUp();
    await client.closed;
    const calls = await app.request("GET", "/v1/calls?direction=inbound", { key: acct.key });
    expect(calls.body.data[0]).toMatchObject({ agent_id: agentId, phone_number: "+14155550177", from_number: "+14155550999" });
    const call = await waitForCallEnd(calls.body.data[0].id);
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });

    const unknown = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, To: "+14155550000" });
    await unknown.closed;
    expect(unknown.closeCode).toBe(1008);
    expect(unknown.closeReason).toContain("+14155550000");
  }, 60_000);

  it("closes with 1008 when the media token is wrong", async () => {
    const client = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: "mt_wrong", agent_id: agentId });
    await client.closed;
    expect(client.closeCode).toBe(1008);
  });

  it("refuses the previous media token with 1008 as soon as a calls:write key rotates it; the new one opens calls", async () => {
    const caller = await app.key(acct.id, ["calls:write"]);
    const rotated = await app.request("POST", "/v1/account/media-token/rotate", { key: caller });
    expect(rotated.status).toBe(200);
    const previous = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, agent_id: agentId });
    await previous.closed;
    expect(previous.closeCode).toBe(1008);
    expect(previous.closeReason).toContain("media token");

    mediaToken = rotated.body.media_token;
    const client = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, agent_id: agentId });
    client.startStreaming();
    await client.waitForAgentSilence();
    client.hangUp();
    await client.closed;
    expect(client.closeCode).not.toBe(1008);
    const calls = await app.parley.services.db.selectFrom("calls").select("id").where("metadata", "like", `%${client.callSid}%`).execute();
    expect(calls).toHaveLength(1);
  }, 60_000);
});

describe("barge-in", () => {
  const LONG = "Thanks for calling Acme Dental. We are open from nine to five on weekdays. We offer cleanings, checkups and whitening. Our clinic is on Main Street next to the post office. How can I help you today?";
  let longAgentId: string;

  beforeAll(async () => {
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Talkative", system_prompt: "p", voice_id: "flite-slt", first_message: LONG, interruption_threshold: 0.5 },
    });
    longAgentId = agent.body.id;
  });

  it("native: the caller talks over the agent; audio stops, clear is sent, the transcript keeps what was heard", async () => {
    const bargeIns = (await scrapeMetrics(app.baseUrl)).value("parley_barge_ins_total", { transport: "native" });
    const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${longAgentId}`, acct.key);
    const { call_id: callId } = await client.waitFor((m) => m.type === "connected");
    client.startStreaming();
    await client.waitFor(() => true, 0);
    await new Promise((r) => setTimeout(r, 2500));
    const spokeAt = Date.now();
    await client.say(fixtureAudio("wait-stop", 16));
    const interruption = await client.waitFor((m) => m.type === "interruption", spokeAt);
    const clear = await client.waitFor((m) => m.type === "clear", spokeAt);
    expect(clear).toBeTruthy();
    expect(interruption.played_ms).toBeGreaterThan(1000);
    await new Promise((r) => setTimeout(r, 1500));
    client.close();
    const call = await waitForCallEnd(callId);
    const firstAgent = call.transcript.find((s: any) => s.role === "agent");
    expect(firstAgent.content.length).toBeGreaterThan(10);
    expect(firstAgent.content.length).toBeLessThan(LONG.length - 20);
    expect(LONG.startsWith(firstAgent.content)).toBe(true);
    // Agent audio received up to the interruption is about what it says was played.
    const receivedMs = (client.audio.filter((a) => a.at <= spokeAt + 1500).reduce((n, a) => n + a.samples.length, 0) / 16000) * 1000;
    expect(Math.abs(receivedMs - interruption.played_ms)).toBeLessThan(1500);
    expect((await scrapeMetrics(app.baseUrl)).value("parley_barge_ins_total", { transport: "native" })).toBeGreaterThan(bargeIns);
  }, 60_000);

  it("twilio: the caller talks over the agent and Twilio receives clear", async () => {
    const client = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: mediaToken, agent_id: longAgentId });
    client.startStreaming();
    await new Promise((r) => setTimeout(r, 2500));
    const spokeAt = Date.now();
    const saidAt = await client.say(fixtureAudio("wait-stop", 8));
    await client.waitFor((m) => m.event === "clear", spokeAt);
    const clearAt = client.messages.find((m) => m.message.event === "clear")!.at;
    // Silence from just after the clear until the caller has finished (the agent's answer comes later).
    await new Promise((r) => setTimeout(r, 300));
    expect(client.audio.filter((a) => a.at > clearAt + 100 && a.at < saidAt + 300).length).toBe(0);
    expect(clearAt - spokeAt).toBeLessThan(1500);
    client.hangUp();
  }, 60_000);

  it("a backchannel ('okay') during agent speech does not interrupt", async () => {
    const bargeIns = (await scrapeMetrics(app.baseUrl)).value("parley_barge_ins_total", { transport: "native" });
    const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${longAgentId}`, acct.key);
    const { call_id: callId } = await client.waitFor((m) => m.type === "connected");
    client.startStreaming();
    await new Promise((r) => setTimeout(r, 2500));
    const saidAt = await client.say(fixtureAudio("okay", 16));
    // The end of the agent's turn (its transcript segment), not a second of silence: the agent
    // pauses while the caller's words are recognized, which under load took over a second.
    await client.waitFor((m) => m.type === "transcript" && m.role === "agent", saidAt - 5000, 30_000);
    expect(client.messages.some((m) => m.message.type === "interruption" || m.message.type === "clear")).toBe(false);
    client.close();
    const call = await waitForCallEnd(callId);
    expect(call.transcript.find((s: any) => s.role === "agent").content).toBe(LONG);
    expect(call.transcript.some((s: any) => s.role === "user")).toBe(false);
    expect((await scrapeMetrics(app.baseUrl)).value("parley_barge_ins_total", { transport: "native" })).toBe(bargeIns);
  }, 60_000);
});

// Last in this file: it stops the service.
describe("shutting down", () => {
  it("refuses new calls (503 shutting_down) and lets a live call finish within the grace period", async () => {
    const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key, 16000);
    const { call_id: callId } = await client.waitFor((m) => m.type === "connected");
    client.startStreaming();
    await client.waitForAgentSilence();
    const stopped = app.parley.stop({ graceMs: 30_000 });
    let stoppedYet = false;
    void stopped.then(() => (stoppedYet = true));

    const refused = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key, 16000).catch((err: any) => err);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("shutting_down");
    // The live call still talks: the agent answers the caller.
    const saidAt = await client.say(fixtureAudio("opening-hours", 16));
    await client.waitForAgentSilence(900, saidAt);
    expect(stoppedYet).toBe(false);

    client.hangUp();
    await stopped;
    // The service has closed its database: read the stored call from the file.
    const db = openDatabase(databaseFile(app.config));
    try {
      const row = await db.selectFrom("calls").select(["status", "transcript"]).where("id", "=", callId).executeTakeFirstOrThrow();
      expect(row.status).toBe("completed");
      const transcript = typeof row.transcript === "string" ? JSON.parse(row.transcript) : row.transcript;
      expect(transcript.some((s: any) => s.role === "user")).toBe(true);
    } finally {
      await db.destroy();
    }
  }, 90_000);
});
