import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { loopbackRewrite } from "../helpers/standin-server.js";
import { TwilioStandIn } from "../helpers/twilio-standin.js";
import { readConnectStream } from "../helpers/twiml-read.js";
import { untilValue } from "../helpers/until.js";
import { CARRIER_GREETING, carrierTestAgents, endedCall } from "../helpers/carrier-call-setup.js";

// Twilio as a carrier by configuration alone: a number's voice URL pointed at
// /carriers/twilio/voice answers calls, and calls from a Twilio number are placed through
// Twilio's Calls API, against a local stand-in speaking Twilio's wire protocol (REST with
// basic auth, webhooks signed by the twilio library, media streams over a real WebSocket).

const PUBLIC = "https://parley.example.test";
const NUMBER = "+14155550100";
const TRANSFERRING = "+14155550101";
const SIMULATED = "+14155550102";
const DESK = "+14155550199";
const GREETING = CARRIER_GREETING;

let standIn: TwilioStandIn;
let app: TestApp;
let acct: TestAccount;
let agentId: string;

beforeAll(async () => {
  standIn = new TwilioStandIn();
  await standIn.start();
  app = await startTestApp({ baseUrl: PUBLIC }, {
    PARLEY_ENGINE: "1",
    PARLEY_CARRIER: "twilio",
    PARLEY_TWILIO_ACCOUNT_SID: standIn.accountSid,
    PARLEY_TWILIO_AUTH_TOKEN: standIn.authToken,
    PARLEY_TWILIO_API_URL: standIn.url,
    PARLEY_SIP_RING_TIMEOUT_MS: "20000",
  });
  standIn.rewrite = loopbackRewrite(app.baseUrl);
  acct = await app.account();
  agentId = await carrierTestAgents(app, acct, { answering: NUMBER, transferring: TRANSFERRING, desk: DESK });
  await app.activeNumber(acct.key, { phone_number: SIMULATED, country: "US", default_agent_id: agentId });
  await app.parley.services.db.updateTable("phone_numbers").set({ carrier: "simulator" }).where("phone_number", "=", SIMULATED).execute();
  standIn.addNumber(NUMBER, `${PUBLIC}/carriers/twilio/voice`);
  standIn.addNumber(TRANSFERRING, `${PUBLIC}/carriers/twilio/voice`);
}, 60_000);

afterAll(async () => {
  await app?.close();
  await standIn?.close();
});

const voiceUrl = `${PUBLIC}/carriers/twilio/voice`;

const ended = (callId: string) => endedCall(app, acct, callId);

async function placeCall(from: string, to = "+14155550177"): Promise<{ id: string; sid: string | undefined }> {
  const before = new Set(standIn.calls.keys());
  const created = await app.request("POST", "/v1/calls", { key: acct.key, body: { agent_id: agentId, phone_number: to, from_number: from } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  if (from === SIMULATED) return { id: created.body.id, sid: undefined };
  const sid = await untilValue("the call created at Twilio", () => [...standIn.calls.keys()].find((k) => !before.has(k)));
  return { id: created.body.id, sid };
}

describe("Twilio webhooks", () => {
  it("refuse bodies past their bounds with 413 (bytes, then parameters), never a 500", async () => {
    const post = (body: string) => fetch(`${app.baseUrl}/carriers/twilio/voice`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    const large = await post(`To=${"1".repeat(17 * 1024)}`);
    expect(large.status).toBe(413);
    expect(((await large.json()) as any).error.code).toBe("payload_too_large");
    const many = await post(Array.from({ length: 150 }, (_, i) => `p${i}=1`).join("&"));
    expect(many.status).toBe(413);
    expect(((await many.json()) as any).error.code).toBe("payload_too_large");
  });

  it("refuse a forged or missing signature (403) and answer an unknown number with <Reject>", async () => {
    const form = new URLSearchParams({ CallSid: "CA" + "1".repeat(32), From: "+14155550123", To: NUMBER, AccountSid: standIn.accountSid });
    const forged = await fetch(`${app.baseUrl}/carriers/twilio/voice`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": "bm90IGEgc2lnbmF0dXJl" }, body: form });
    expect(forged.status).toBe(403);
    const unsigned = await fetch(`${app.baseUrl}/carriers/twilio/status?call_id=call_x`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form });
    expect(unsigned.status).toBe(403);
    const unknown = await standIn.incomingCall(voiceUrl, { from: "+14155550123", to: "+14155550000" });
    expect(unknown.status).toBe(200);
    expect(unknown.twiml).toMatch(/<Reject/);
  });
});

describe("inbound through Twilio", () => {
  it("answers with a single-use stream token (no account secret in the TwiML), converses, and refuses the token replayed", async () => {
    const incoming = await standIn.incomingCall(voiceUrl, { from: "+14155550123", to: NUMBER });
    expect(incoming.status).toBe(200);
    const { url, parameters } = readConnectStream(incoming.twiml);
    expect(url).toBe("wss://parley.example.test/media/twilio");
    expect(Object.keys(parameters)).toEqual(["stream_token"]);
    const stream = await standIn.connectStream(incoming.twiml, { callSid: incoming.callSid });
    stream.startStreaming();
    await stream.waitForAgentSilence();
    await standIn.hangUpRemote(incoming.callSid);
    const list = await untilValue("the inbound call", async () => (await app.request("GET", "/v1/calls?direction=inbound", { key: acct.key })).body.data.find((c: any) => c.metadata?.twilio_call_sid === incoming.callSid));
    const call = await ended(list.id);
    expect(call).toMatchObject({ status: "completed", direction: "inbound", phone_number: NUMBER, from_number: "+14155550123" });
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    // The same TwiML again (a replayed token) opens nothing.
    const replay = await standIn.connectStream(incoming.twiml);
    await replay.closed;
    expect(replay.closeCode).toBe(1008);
    expect(replay.closeReason).toMatch(/used/);
  }, 60_000);

  it("transfers a caller who asks for a person by redirecting the live call to a <Dial>", async () => {
    const incoming = await standIn.incomingCall(voiceUrl, { from: "+14155550124", to: TRANSFERRING });
    const stream = await standIn.connectStream(incoming.twiml, { callSid: incoming.callSid });
    stream.startStreaming();
    await stream.waitForAgentSilence();
    await stream.say(fixtureAudio("speak-to-human", 8));
    await untilValue("the redirect to the desk", () => standIn.call(incoming.callSid).dialed);
    expect(standIn.call(incoming.callSid).dialed).toBe(DESK);
    const list = await untilValue("the transferred call", async () => (await app.request("GET", "/v1/calls?status=transferred", { key: acct.key })).body.data.find((c: any) => c.metadata?.twilio_call_sid === incoming.callSid));
    expect(list).toMatchObject({ phone_number: TRANSFERRING });
    // Redirected, not hung up: no Status=completed was sent for it.
    expect(standIn.call(incoming.callSid).updates.some((u) => u.Status === "completed")).toBe(false);
  }, 60_000);
});

describe("outbound through Twilio", () => {
  it("rings, is answered, converses, and is hung up from the API (Status=completed at Twilio)", async () => {
    const { id, sid } = await placeCall(NUMBER);
    const placed = standIn.call(sid!);
    expect(placed.params).toMatchObject({ To: "+14155550177", From: NUMBER, StatusCallback: `${PUBLIC}/carriers/twilio/status?call_id=${id}` });
    expect(readConnectStream(placed.twiml!).url).toBe("wss://parley.example.test/media/twilio");
    expect((await standIn.statusCallback(sid!, "ringing"))?.status).toBe(204);
    expect((await app.request("GET", `/v1/calls/${id}`, { key: acct.key })).body.status).toBe("ringing");
    const stream = await standIn.answer(sid!);
    stream.startStreaming();
    await stream.waitForAgentSilence();
    expect((await app.request("GET", `/v1/calls/${id}`, { key: acct.key })).body.status).toBe("in_progress");
    const end = await app.request("POST", `/v1/calls/${id}/end`, { key: acct.key });
    expect(end.status).toBe(200);
    const call = await ended(id);
    expect(call.status).toBe("completed");
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    await untilValue("the hang-up at Twilio", () => placed.updates.some((u) => u.Status === "completed"));
  }, 60_000);

  it("ends busy, no answer and failed as Twilio reports them", async () => {
    for (const [status, expected] of [["busy", "busy"], ["no-answer", "no_answer"], ["failed", "failed"]] as const) {
      const { id, sid } = await placeCall(NUMBER);
      await standIn.statusCallback(sid!, status);
      expect((await ended(id)).status).toBe(expected);
    }
    // Twilio refusing the call itself (its API answers 500): failed.
    standIn.failNext(1, 500);
    const created = await app.request("POST", "/v1/calls", { key: acct.key, body: { agent_id: agentId, phone_number: "+14155550177", from_number: NUMBER } });
    expect((await ended(created.body.id)).status).toBe("failed");
  }, 60_000);

  it("a call still ringing ended from the API is cancelled at Twilio", async () => {
    const { id, sid } = await placeCall(NUMBER);
    await standIn.statusCallback(sid!, "ringing");
    expect((await app.request("POST", `/v1/calls/${id}/end`, { key: acct.key })).status).toBe(200);
    expect((await ended(id)).status).toBe("no_answer");
    await untilValue("the cancel at Twilio", () => standIn.call(sid!).updates.some((u) => u.Status === "canceled"));
  }, 30_000);

  it("goes through the carrier of its from_number: a simulator number's call never reaches Twilio", async () => {
    const calls = standIn.calls.size;
    // The simulator's busy number: it answers busy itself.
    const { id } = await placeCall(SIMULATED, "+15005550001");
    expect((await ended(id)).status).toBe("busy");
    expect(standIn.calls.size).toBe(calls);
  }, 60_000);
});
