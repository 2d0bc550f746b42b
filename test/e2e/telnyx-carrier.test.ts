import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { loopbackRewrite } from "../helpers/standin-server.js";
import { TelnyxStandIn } from "../helpers/telnyx-standin.js";
import { untilValue } from "../helpers/until.js";
import { CARRIER_GREETING, carrierTestAgents, endedCall } from "../helpers/carrier-call-setup.js";

// Telnyx as a carrier by configuration alone: the Call Control application's webhook pointed at
// /carriers/telnyx/events answers calls to Telnyx numbers, and calls from them are dialled
// through Call Control, against a local stand-in speaking Telnyx's wire protocol (REST with its
// API key, webhooks signed with ed25519, a media stream over a real WebSocket).

const PUBLIC = "https://parley.example.test";
const NUMBER = "+14155550200";
const TRANSFERRING = "+14155550201";
const DESK = "+14155550299";
const GREETING = CARRIER_GREETING;
const CONNECTION = "1494404757140276705";

let standIn: TelnyxStandIn;
let app: TestApp;
let acct: TestAccount;
let agentId: string;
const events = `${PUBLIC}/carriers/telnyx/events`;

beforeAll(async () => {
  standIn = new TelnyxStandIn({ connectionId: CONNECTION, webhookUrl: events });
  await standIn.start();
  app = await startTestApp({ baseUrl: PUBLIC }, {
    PARLEY_ENGINE: "1",
    PARLEY_CARRIER: "telnyx",
    PARLEY_TELNYX_API_KEY: standIn.apiKey,
    PARLEY_TELNYX_PUBLIC_KEY: standIn.publicKeyBase64,
    PARLEY_TELNYX_CONNECTION_ID: CONNECTION,
    PARLEY_TELNYX_API_URL: standIn.url,
    PARLEY_SIP_RING_TIMEOUT_MS: "20000",
  });
  standIn.rewrite = loopbackRewrite(app.baseUrl);
  acct = await app.account();
  agentId = await carrierTestAgents(app, acct, { answering: NUMBER, transferring: TRANSFERRING, desk: DESK });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await standIn?.close();
});

const ended = (callId: string) => endedCall(app, acct, callId);

async function placeCall(): Promise<{ id: string; callControlId: string }> {
  const before = new Set(standIn.calls.keys());
  const created = await app.request("POST", "/v1/calls", { key: acct.key, body: { agent_id: agentId, phone_number: "+14155550277", from_number: NUMBER } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const callControlId = await untilValue("the call dialled at Telnyx", () => [...standIn.calls.keys()].find((k) => !before.has(k)));
  return { id: created.body.id, callControlId };
}

/** The Parley call that `callControlId` became. */
const callOf = (callControlId: string) =>
  untilValue("the call", async () => (await app.request("GET", "/v1/calls?limit=100", { key: acct.key })).body.data.find((c: any) => c.metadata?.telnyx_call_control_id === callControlId));

describe("Telnyx webhooks", () => {
  it("refuse a body past 64 KB with 413, never a 500", async () => {
    const large = await fetch(`${app.baseUrl}/carriers/telnyx/events`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ pad: "x".repeat(65 * 1024) }) });
    expect(large.status).toBe(413);
    expect(((await large.json()) as any).error.code).toBe("payload_too_large");
  });

  it("refuse a forged, unsigned or stale signature (403)", async () => {
    const { callControlId } = await standIn.incomingCall("https://elsewhere.example.test/none", { from: "+14155550123", to: "+14155550000" });
    const { generateKeyPairSync } = await import("node:crypto");
    const forged = await standIn.event(callControlId, "call.initiated", {}, { url: events, signWith: generateKeyPairSync("ed25519").privateKey });
    expect(forged.status).toBe(403);
    expect((await standIn.event(callControlId, "call.initiated", {}, { url: events, unsigned: true })).status).toBe(403);
    expect((await standIn.event(callControlId, "call.initiated", {}, { url: events, timestamp: Math.floor(Date.now() / 1000) - 600 })).status).toBe(403);
  });
});

describe("inbound through Telnyx", () => {
  it("answers with its audio streamed to /media/telnyx and a single-use token, converses, and refuses the token replayed", async () => {
    const { callControlId } = await standIn.incomingCall(events, { from: "+14155550123", to: NUMBER });
    const answered = await untilValue("the answer command", () => standIn.call(callControlId).commands.find((c) => c.action === "answer"));
    expect(answered.body).toMatchObject({ stream_url: "wss://parley.example.test/media/telnyx", stream_track: "inbound_track", stream_bidirectional_mode: "rtp", stream_bidirectional_codec: "PCMU" });
    const stream = await untilValue("the stream", () => standIn.call(callControlId).stream);
    stream.startStreaming();
    await stream.waitForAgentSilence();
    await standIn.hangUpRemote(callControlId);
    const call = await ended((await callOf(callControlId)).id);
    expect(call).toMatchObject({ status: "completed", direction: "inbound", phone_number: NUMBER, from_number: "+14155550123" });
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    // The same stream opened again (its client_state replayed) opens nothing.
    const replay = await standIn.connectStream("wss://parley.example.test/media/telnyx", { callControlId });
    await replay.closed;
    expect(replay.closeCode).toBe(1008);
    expect(replay.closeReason).toMatch(/used/);
  }, 60_000);

  it("hangs up a call to a number Parley does not answer", async () => {
    const { callControlId } = await standIn.incomingCall(events, { from: "+14155550123", to: "+14155550000" });
    await untilValue("the hang-up", () => standIn.call(callControlId).commands.some((c) => c.action === "hangup"));
  });

  it("transfers a caller who asks for a person through Call Control", async () => {
    const { callControlId } = await standIn.incomingCall(events, { from: "+14155550124", to: TRANSFERRING });
    const stream = await untilValue("the stream", () => standIn.call(callControlId).stream);
    stream.startStreaming();
    await stream.waitForAgentSilence();
    await stream.say(fixtureAudio("speak-to-human", 8));
    expect(await untilValue("the transfer", () => standIn.call(callControlId).transferredTo)).toBe(DESK);
    expect(standIn.call(callControlId).commands.some((c) => c.action === "hangup")).toBe(false);
    await untilValue("the call transferred", async () => (await callOf(callControlId)).status === "transferred");
  }, 60_000);
});

describe("outbound through Telnyx", () => {
  it("is answered, converses, and is hung up from the API", async () => {
    const { id, callControlId } = await placeCall();
    expect(standIn.call(callControlId).params).toMatchObject({ connection_id: CONNECTION, to: "+14155550277", from: NUMBER, webhook_url: `${events}?call_id=${id}`, stream_url: "wss://parley.example.test/media/telnyx" });
    const stream = await standIn.answer(callControlId);
    stream!.startStreaming();
    await stream!.waitForAgentSilence();
    expect((await app.request("GET", `/v1/calls/${id}`, { key: acct.key })).body.status).toBe("in_progress");
    expect((await app.request("POST", `/v1/calls/${id}/end`, { key: acct.key })).status).toBe(200);
    const call = await ended(id);
    expect(call.status).toBe("completed");
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    await untilValue("the hang-up at Telnyx", () => standIn.call(callControlId).commands.some((c) => c.action === "hangup"));
  }, 60_000);

  it("ends busy, no answer and failed as Telnyx reports them", async () => {
    for (const [cause, expected] of [["user_busy", "busy"], ["timeout", "no_answer"], ["unspecified", "failed"]] as const) {
      const { id, callControlId } = await placeCall();
      await standIn.hangUpRemote(callControlId, cause);
      expect((await ended(id)).status).toBe(expected);
    }
    standIn.failNext(1, 500);
    const created = await app.request("POST", "/v1/calls", { key: acct.key, body: { agent_id: agentId, phone_number: "+14155550277", from_number: NUMBER } });
    expect((await ended(created.body.id)).status).toBe("failed");
  }, 60_000);
});
