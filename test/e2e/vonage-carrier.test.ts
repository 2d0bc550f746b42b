import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { untilValue } from "../helpers/until.js";
import { loopbackRewrite } from "../helpers/standin-server.js";
import { vonageKeyPair, VonageStandIn, websocketEndpoint } from "../helpers/vonage-standin.js";
import { CARRIER_GREETING, carrierTestAgents, endedCall } from "../helpers/carrier-call-setup.js";

// Vonage as a carrier by configuration alone: an application's answer URL pointed at
// /carriers/vonage/answer answers calls, and calls from a Vonage number are placed through the
// Voice API, against a local stand-in speaking Vonage's wire protocol (REST with RS256 tokens
// checked by @vonage/jwt, webhooks signed with HS256 JWTs, media over a real WebSocket).

const PUBLIC = "https://parley.example.test";
const NUMBER = "+14155550100";
const TRANSFERRING = "+14155550101";
const DESK = "+14155550199";
const CALLEE = "+14155550177";
const GREETING = CARRIER_GREETING;
const answerUrl = `${PUBLIC}/carriers/vonage/answer`;

const keys = vonageKeyPair();
const keyDir = mkdtempSync(path.join(os.tmpdir(), "parley-vonage-key-"));
let standIn: VonageStandIn;
let app: TestApp;
let acct: TestAccount;
let agentId: string;

beforeAll(async () => {
  standIn = new VonageStandIn({ publicKeyPem: keys.publicKeyPem, applicationId: randomUUID() });
  await standIn.start();
  const keyFile = path.join(keyDir, "private.key");
  writeFileSync(keyFile, keys.privateKeyPem, { mode: 0o600 });
  app = await startTestApp({ baseUrl: PUBLIC }, {
    PARLEY_ENGINE: "1",
    PARLEY_CARRIER: "vonage",
    PARLEY_VONAGE_APPLICATION_ID: standIn.applicationId,
    PARLEY_VONAGE_PRIVATE_KEY_FILE: keyFile,
    PARLEY_VONAGE_SIGNATURE_SECRET: standIn.signatureSecret,
    PARLEY_VONAGE_API_URL: standIn.url,
    PARLEY_SIP_RING_TIMEOUT_MS: "20000",
  });
  standIn.rewrite = loopbackRewrite(app.baseUrl);
  acct = await app.account();
  agentId = await carrierTestAgents(app, acct, { answering: NUMBER, transferring: TRANSFERRING, desk: DESK });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await standIn?.close();
  rmSync(keyDir, { recursive: true, force: true });
});

const ended = (callId: string) => endedCall(app, acct, callId);

async function placeCall(): Promise<{ id: string; uuid: string }> {
  const before = new Set(standIn.calls.keys());
  const created = await app.request("POST", "/v1/calls", { key: acct.key, body: { agent_id: agentId, phone_number: CALLEE, from_number: NUMBER } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const uuid = await untilValue("the call created at Vonage", () => [...standIn.calls.keys()].find((k) => !before.has(k)));
  return { id: created.body.id, uuid };
}

const status = async (id: string) => (await app.request("GET", `/v1/calls/${id}`, { key: acct.key })).body.status;

/** Posts `body` to a webhook path of the app (loopback) with this Authorization. */
const post = (pathAndQuery: string, body: string, authorization?: string) =>
  fetch(`${app.baseUrl}${pathAndQuery}`, { method: "POST", headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) }, body });

describe("Vonage webhooks", () => {
  it("refuse a body past 16 KB with 413, never a 500", async () => {
    const large = await fetch(`${app.baseUrl}/carriers/vonage/events`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ pad: "x".repeat(17 * 1024) }) });
    expect(large.status).toBe(413);
    expect(((await large.json()) as any).error.code).toBe("payload_too_large");
  });

  it("refuse unsigned, forged, tampered and other applications' requests (403); an unknown number's NCCO ends the call", async () => {
    const answer = JSON.stringify({ to: NUMBER.slice(1), from: "14155550123", uuid: randomUUID(), conversation_uuid: "CON-x" });
    expect((await post("/carriers/vonage/answer", answer)).status).toBe(403);
    expect((await post("/carriers/vonage/events?call_id=call_x", JSON.stringify({ status: "busy", uuid: randomUUID() }))).status).toBe(403);
    const forger = new VonageStandIn({ publicKeyPem: keys.publicKeyPem, applicationId: standIn.applicationId });
    expect((await post("/carriers/vonage/answer", answer, `Bearer ${forger.webhookToken(answer)}`)).status).toBe(403);
    // Signed, but for another body: payload_hash binds the token to what it was made for.
    expect((await post("/carriers/vonage/answer", answer.replace("14155550123", "14155550999"), `Bearer ${standIn.webhookToken(answer)}`)).status).toBe(403);
    const otherApp = new VonageStandIn({ publicKeyPem: keys.publicKeyPem, signatureSecret: standIn.signatureSecret, applicationId: randomUUID() });
    expect((await post("/carriers/vonage/answer", answer, `Bearer ${otherApp.webhookToken(answer)}`)).status).toBe(403);
    const getUnsigned = await fetch(`${app.baseUrl}/carriers/vonage/answer?to=${NUMBER.slice(1)}&from=14155550123&uuid=${randomUUID()}`);
    expect(getUnsigned.status).toBe(403);
    // The real one is answered.
    expect((await post("/carriers/vonage/answer", answer, `Bearer ${standIn.webhookToken(answer)}`)).status).toBe(200);

    const unknown = await standIn.incomingCall(answerUrl, { from: "+14155550123", to: "+14155550000" });
    expect(unknown.status).toBe(200);
    expect(unknown.ncco).toEqual([]);
  });
});

describe("inbound through Vonage", () => {
  it("answers with a single-use stream token (no account secret in the NCCO), converses, and refuses the token replayed", async () => {
    const incoming = await standIn.incomingCall(answerUrl, { from: "+14155550123", to: NUMBER });
    expect(incoming.status).toBe(200);
    const endpoint = websocketEndpoint(incoming.ncco)!;
    expect(endpoint).toMatchObject({ type: "websocket", uri: "wss://parley.example.test/media/vonage", "content-type": "audio/l16;rate=16000" });
    expect(Object.keys(endpoint.headers as object).sort()).toEqual(["call_uuid", "stream_token"]);
    expect((endpoint.headers as Record<string, string>).call_uuid).toBe(incoming.uuid);
    for (const secret of [acct.key, standIn.signatureSecret]) expect(incoming.body).not.toContain(secret);

    const stream = await standIn.connectWebsocket(incoming.ncco, { uuid: incoming.uuid });
    stream.startStreaming();
    await stream.waitForAgentSilence();
    await standIn.hangUpRemote(incoming.uuid);
    const list = await untilValue("the inbound call", async () => (await app.request("GET", "/v1/calls?direction=inbound", { key: acct.key })).body.data.find((c: any) => c.metadata?.vonage_call_uuid === incoming.uuid));
    const call = await ended(list.id);
    expect(call).toMatchObject({ status: "completed", direction: "inbound", phone_number: NUMBER, from_number: "+14155550123" });
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    // The same NCCO again (a replayed token) opens nothing.
    const replay = await standIn.connectWebsocket(incoming.ncco);
    await replay.closed;
    expect(replay.closeCode).toBe(1008);
    expect(replay.closeReason).toMatch(/used/);
  }, 60_000);

  it("refuses a stream whose call_uuid is not the call its token was issued for", async () => {
    const incoming = await standIn.incomingCall(answerUrl, { from: "+14155550123", to: NUMBER, method: "POST" });
    expect(incoming.status).toBe(200);
    const endpoint = websocketEndpoint(incoming.ncco)!;
    const swapped = [{ action: "connect", endpoint: [{ ...endpoint, headers: { ...(endpoint.headers as object), call_uuid: randomUUID() } }] }];
    const stream = await standIn.connectWebsocket(swapped);
    await stream.closed;
    expect(stream.closeCode).toBe(1008);
    expect(stream.closeReason).toMatch(/another call/);
  }, 30_000);

  it("transfers a caller who asks for a person with a PUT transfer to an NCCO that dials the desk", async () => {
    const incoming = await standIn.incomingCall(answerUrl, { from: "+14155550124", to: TRANSFERRING });
    const stream = await standIn.connectWebsocket(incoming.ncco, { uuid: incoming.uuid });
    stream.startStreaming();
    await stream.waitForAgentSilence();
    await stream.say(fixtureAudio("speak-to-human", 16));
    await untilValue("the transfer to the desk", () => standIn.call(incoming.uuid).dialed);
    expect(standIn.call(incoming.uuid).dialed).toEqual({ type: "phone", number: DESK.slice(1) });
    const list = await untilValue("the transferred call", async () => (await app.request("GET", "/v1/calls?status=transferred", { key: acct.key })).body.data.find((c: any) => c.metadata?.vonage_call_uuid === incoming.uuid));
    expect(list).toMatchObject({ phone_number: TRANSFERRING });
    // Transferred, not hung up.
    expect(standIn.call(incoming.uuid).updates.map((u) => u.action)).toEqual(["transfer"]);
  }, 60_000);
});

describe("outbound through Vonage", () => {
  it("rings, is answered, converses, and is hung up from the API (PUT hangup at Vonage)", async () => {
    const { id, uuid } = await placeCall();
    const placed = standIn.call(uuid);
    expect(placed.body).toMatchObject({ to: [{ type: "phone", number: CALLEE.slice(1) }], from: { type: "phone", number: NUMBER.slice(1) }, event_url: [`${PUBLIC}/carriers/vonage/events?call_id=${id}`], event_method: "POST", ringing_timer: 20 });
    expect(websocketEndpoint(placed.ncco)).toMatchObject({ uri: "wss://parley.example.test/media/vonage" });
    expect((await standIn.event(uuid, "ringing"))?.status).toBe(204);
    expect(await status(id)).toBe("ringing");
    const stream = await standIn.answer(uuid);
    stream.startStreaming();
    await stream.waitForAgentSilence();
    expect(await status(id)).toBe("in_progress");
    expect((await app.request("POST", `/v1/calls/${id}/end`, { key: acct.key })).status).toBe(200);
    const call = await ended(id);
    expect(call.status).toBe("completed");
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    await untilValue("the hang-up at Vonage", () => placed.updates.some((u) => u.action === "hangup"));
  }, 60_000);

  it("ends busy, no answer (timeout) and failed as Vonage reports them, each only for its own call", async () => {
    for (const [vonageStatus, expected] of [["busy", "busy"], ["timeout", "no_answer"], ["failed", "failed"]] as const) {
      const { id, uuid } = await placeCall();
      await standIn.event(uuid, vonageStatus);
      expect((await ended(id)).status).toBe(expected);
    }
    // A signed event of one call, replayed with another's call_id: the token binds the body, not the URL.
    const first = await placeCall();
    const second = await placeCall();
    const sent = (await standIn.event(first.uuid, "busy"))!;
    expect((await ended(first.id)).status).toBe("busy");
    const replayed = await post(`/carriers/vonage/events?call_id=${encodeURIComponent(second.id)}`, sent.rawBody, sent.authorization);
    expect(replayed.status).toBe(204);
    expect(await status(second.id)).toBe("ringing");
    await standIn.event(second.uuid, "unanswered");
    expect((await ended(second.id)).status).toBe("no_answer");
    // Vonage refusing the call itself (its API answers 500): failed.
    standIn.failNext(1, 500);
    const created = await app.request("POST", "/v1/calls", { key: acct.key, body: { agent_id: agentId, phone_number: CALLEE, from_number: NUMBER } });
    expect((await ended(created.body.id)).status).toBe("failed");
  }, 60_000);
});
