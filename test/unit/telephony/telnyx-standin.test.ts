import { generateKeyPairSync } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Telnyx from "telnyx";
import { TelnyxWebhook } from "telnyx/lib/webhooks";
import { WebSocketServer, type WebSocket } from "ws";
import { decodeMulaw } from "../../../engine/audio/mulaw.js";
import { isTelnyxSignatureValid } from "../../../src/telephony/carriers/telnyx/webhook-signature.js";
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from "../../helpers/webhook-receiver.js";
import { loopbackRewrite } from "../../helpers/standin-server.js";
import { TelnyxStandIn } from "../../helpers/telnyx-standin.js";
import { until } from "../../helpers/until.js";

// The stand-in's own behaviour. Public URLs (parley.example) are only strings that get signed:
// every request goes to loopback through `rewrite`, and the stand-in refuses anything else.

const PUBLIC = "https://parley.example";
const EVENTS = `${PUBLIC}/carriers/telnyx/events`;
const STREAM = "wss://parley.example/media/telnyx";
const OWNED = "+15550001111";
const CALLEE = "+15550002222";
const CONNECTION = "2811212257810187875";

const standIn = new TelnyxStandIn({ connectionId: CONNECTION });
let receiver: WebhookReceiver;
let wss: WebSocketServer;
let wsPort = 0;
const sockets: Array<{ socket: WebSocket; headers: IncomingHttpHeaders; url: string; messages: any[] }> = [];

beforeAll(async () => {
  await standIn.start();
  receiver = await startWebhookReceiver("/");
  wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  wsPort = (wss.address() as AddressInfo).port;
  wss.on("connection", (socket, req) => {
    const entry = { socket, headers: req.headers, url: req.url ?? "", messages: [] as any[] };
    sockets.push(entry);
    socket.on("message", (data) => entry.messages.push(JSON.parse(data.toString())));
  });
  // Webhooks to the receiver, streams to the WebSocket server: both on loopback.
  const toReceiver = loopbackRewrite(receiver.url);
  standIn.rewrite = (url) => (url.startsWith("wss://") ? url.replace("wss://parley.example", `ws://127.0.0.1:${wsPort}`) : toReceiver(url));
});
afterAll(async () => {
  await standIn.close();
  await receiver.close();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
});

/** Telnyx's own client library, pointed at the stand-in and never past loopback. */
function telnyxClient(apiKey = standIn.apiKey): Telnyx {
  return new Telnyx({
    apiKey,
    baseURL: standIn.apiBase,
    maxRetries: 0,
    fetch: (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (!url.startsWith(standIn.url + "/")) throw new Error(`not the stand-in: ${url}`);
      return fetch(input, init);
    },
  });
}

function post(path: string, body: unknown, authorization = `Bearer ${standIn.apiKey}`): Promise<Response> {
  return fetch(`${standIn.url}${path}`, { method: "POST", headers: { authorization, "content-type": "application/json" }, body: JSON.stringify(body) });
}

const headersOf = (r: ReceivedWebhook) => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
const received = (eventType: string, id: string) => receiver.received.filter((r) => r.body?.data?.event_type === eventType && r.body.data.payload.call_control_id === id);

describe("the Telnyx stand-in's Call Control API", () => {
  it("refuses a wrong API key and no key with Telnyx's 401 error body, and records no call", async () => {
    for (const authorization of ["Bearer KEY-wrong", ""]) {
      const res = await post("/v2/calls", { connection_id: CONNECTION, to: CALLEE, from: OWNED }, authorization);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        errors: [{ code: "10009", title: "Authentication failed", detail: "The required authentication headers were either invalid or not included in the request.", meta: { url: "https://developers.telnyx.com/docs/overview/errors/10009" } }],
      });
    }
    await expect(telnyxClient("KEY-wrong").calls.dial({ connection_id: CONNECTION, to: CALLEE, from: OWNED })).rejects.toBeInstanceOf(Telnyx.AuthenticationError);
    expect(standIn.calls.size).toBe(0);
  });

  it("dials with Telnyx's client library: 200 with the call's ids, the request recorded, then a signed call.initiated", async () => {
    const before = receiver.received.length;
    const { data } = await telnyxClient().calls.dial({
      connection_id: CONNECTION,
      to: CALLEE,
      from: OWNED,
      webhook_url: `${EVENTS}?call=c1`,
      stream_url: STREAM,
      stream_track: "inbound_track",
      stream_auth_token: "st_secret",
      client_state: Buffer.from("call_1").toString("base64"),
      timeout_secs: 30,
    });
    expect(data).toMatchObject({ call_control_id: expect.stringMatching(/^v3:[A-Za-z0-9_-]+$/), call_leg_id: expect.any(String), call_session_id: expect.any(String), is_alive: false, record_type: "call" });
    const call = standIn.call(data!.call_control_id);
    expect(call).toMatchObject({ direction: "outgoing", state: "bridging", from: OWNED, to: CALLEE, connectionId: CONNECTION, streamUrl: STREAM, streamTrack: "inbound_track", streamAuthToken: "st_secret", webhookUrl: `${EVENTS}?call=c1`, clientState: "Y2FsbF8x" });
    expect(call.params).toMatchObject({ timeout_secs: 30 });
    await standIn.idle();
    const [initiated] = receiver.received.slice(before);
    expect(initiated!.body).toMatchObject({
      data: { event_type: "call.initiated", record_type: "event", id: expect.any(String), occurred_at: expect.any(String), payload: { call_control_id: call.callControlId, connection_id: CONNECTION, from: OWNED, to: CALLEE, direction: "outgoing", state: "bridging", client_state: "Y2FsbF8x" } },
      meta: { attempt: 1, delivered_to: `${EVENTS}?call=c1` },
    });
    expect(initiated!.headers["content-type"]).toBe("application/json");
    const headers = headersOf(initiated!);
    expect(isTelnyxSignatureValid({ publicKey: standIn.publicKeyBase64, signature: headers["telnyx-signature-ed25519"], timestamp: headers["telnyx-timestamp"], rawBody: initiated!.rawBody, now: Date.now() })).toBe(true);
  });

  it("refuses a dial without connection_id, to or from, with another connection, or with a client_state that is not base64 (422)", async () => {
    const count = standIn.calls.size;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ to: CALLEE, from: OWNED }, "10004"],
      [{ connection_id: CONNECTION, from: OWNED }, "10004"],
      [{ connection_id: CONNECTION, to: CALLEE }, "10004"],
      [{ connection_id: "999", to: CALLEE, from: OWNED }, "10015"],
      [{ connection_id: CONNECTION, to: CALLEE, from: OWNED, client_state: "not base64!" }, "10015"],
    ];
    for (const [body, code] of cases) {
      const res = await post("/v2/calls", body);
      expect(res.status).toBe(422);
      expect(((await res.json()) as any).errors[0]).toMatchObject({ code });
    }
    expect(standIn.calls.size).toBe(count);
  });

  it("records answer, transfer and hangup commands (200 result ok), 404 for an unknown call, 422 once it has ended", async () => {
    const { callControlId } = await standIn.incomingCall(EVENTS, { from: CALLEE, to: OWNED });
    const client = telnyxClient();
    // No stream_url: answering sends call.answered only.
    expect(await client.calls.actions.answer(callControlId, { client_state: "YQ==", command_id: "cmd-1" })).toEqual({ data: { result: "ok" } });
    // The same command_id again is ignored, as Telnyx does.
    await client.calls.actions.answer(callControlId, { command_id: "cmd-1" });
    await client.calls.actions.transfer(callControlId, { to: "+15550003333" });
    await client.calls.actions.hangup(callControlId, {});
    const call = standIn.call(callControlId);
    expect(call.commands.map((c) => c.action)).toEqual(["answer", "transfer", "hangup"]);
    expect(call).toMatchObject({ transferredTo: "+15550003333", state: "ended", hangupCause: "normal_clearing", clientState: "YQ==" });
    await standIn.idle();
    expect(call.webhooks.map((w) => w.body.data.event_type)).toEqual(["call.initiated", "call.answered", "call.hangup"]);
    expect(call.webhooks[2]!.body.data.payload).toMatchObject({ hangup_cause: "normal_clearing", hangup_source: "callee", client_state: "YQ==" });

    const unknown = await post(`/v2/calls/${encodeURIComponent("v3:unknown")}/actions/hangup`, {});
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ errors: [{ code: "10005", title: "Resource not found" }] });
    const late = await post(`/v2/calls/${encodeURIComponent(callControlId)}/actions/hangup`, {});
    expect(late.status).toBe(422);
    expect(await late.json()).toMatchObject({ errors: [{ code: "90018", title: "Call has already ended" }] });
    expect((await post(`/v2/calls/${encodeURIComponent(callControlId)}/actions/no_such_action`, {})).status).toBe(404);
  });

  it("answers Telnyx's 500 error to the requests failNext names, then serves again", async () => {
    standIn.failNext(1);
    const failed = await post("/v2/calls", { connection_id: CONNECTION, to: CALLEE, from: OWNED });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ errors: [{ code: "10007" }] });
    expect((await post("/v2/calls", { connection_id: CONNECTION, to: CALLEE, from: OWNED })).status).toBe(200);
  });
});

describe("the stand-in's webhooks", () => {
  it("signs as Telnyx does: Telnyx's library and Parley's check accept it; another key, a changed body, no signature are refused", async () => {
    const { callControlId, webhook } = await standIn.incomingCall(EVENTS, { from: CALLEE, to: OWNED });
    const hook = receiver.received.at(-1)!;
    expect(hook.rawBody).toBe(webhook.rawBody);
    expect(hook.body.data).toMatchObject({ event_type: "call.initiated", payload: { call_control_id: callControlId, direction: "incoming", state: "parked", from: CALLEE, to: OWNED, client_state: null } });
    const headers = headersOf(hook);
    expect(headers["telnyx-timestamp"]).toMatch(/^\d+$/);
    await expect(new TelnyxWebhook(standIn.publicKeyBase64).verify(hook.rawBody, headers)).resolves.toBeUndefined();
    const event: any = await telnyxClient().webhooks.unwrap(hook.rawBody, { headers, key: standIn.publicKeyBase64 });
    expect(event.data.payload.call_control_id).toBe(callControlId);
    const check = { publicKey: standIn.publicKeyBase64, signature: headers["telnyx-signature-ed25519"], timestamp: headers["telnyx-timestamp"], now: Date.now() };
    expect(isTelnyxSignatureValid({ ...check, rawBody: hook.rawBody })).toBe(true);
    expect(isTelnyxSignatureValid({ ...check, rawBody: hook.rawBody.replace(CALLEE, "+15559999999") })).toBe(false);

    const forged = await standIn.event(callControlId, "call.hangup", { hangup_cause: "originator_cancel" }, { signWith: generateKeyPairSync("ed25519").privateKey });
    const forgedHeaders = headersOf(receiver.received.at(-1)!);
    await expect(new TelnyxWebhook(standIn.publicKeyBase64).verify(forged.rawBody, forgedHeaders)).rejects.toThrow();
    expect(isTelnyxSignatureValid({ ...check, signature: forgedHeaders["telnyx-signature-ed25519"], timestamp: forgedHeaders["telnyx-timestamp"], rawBody: forged.rawBody })).toBe(false);
    await standIn.event(callControlId, "call.hangup", {}, { unsigned: true });
    expect(receiver.received.at(-1)!.headers["telnyx-signature-ed25519"]).toBeUndefined();
  });

  it("drives a dialled call's end from the far end: busy and no answer as call.hangup causes", async () => {
    for (const cause of ["user_busy", "timeout"] as const) {
      const { data } = await telnyxClient().calls.dial({ connection_id: CONNECTION, to: CALLEE, from: OWNED, webhook_url: EVENTS });
      const sent = await standIn.hangUpRemote(data!.call_control_id, cause);
      expect(sent.body.data.payload).toMatchObject({ state: "hangup", hangup_cause: cause, hangup_source: "callee" });
      expect(standIn.call(data!.call_control_id)).toMatchObject({ state: "ended", hangupCause: cause });
    }
  });

  it("refuses to reach an address that is not loopback (no rewrite), before connecting", async () => {
    const alone = new TelnyxStandIn();
    await expect(alone.incomingCall(EVENTS, { from: CALLEE, to: OWNED })).rejects.toThrow(/only connects to loopback/);
    await expect(alone.connectStream(STREAM, { callControlId: "v3:x" })).rejects.toThrow(/only connects to loopback/);
  });
});

describe("the stand-in's media stream", () => {
  it("opens the dial's stream_url when the far end answers: token header, connected, start, PCMU media, mark echoed, stop on hang-up", async () => {
    const { data } = await telnyxClient().calls.dial({ connection_id: CONNECTION, to: CALLEE, from: OWNED, webhook_url: EVENTS, stream_url: STREAM, stream_auth_token: "st_token", client_state: "YWJj" });
    const id = data!.call_control_id;
    const streamsBefore = sockets.length;
    const client = await standIn.answer(id);
    expect(client).toBeDefined();
    await until("connected and start", () => sockets.length === streamsBefore + 1 && sockets.at(-1)!.messages.length >= 2);
    const server = sockets.at(-1)!;
    expect(server.url).toBe("/media/telnyx");
    expect(server.headers["x-telnyx-streaming-auth-token"]).toBe("st_token");
    const [connected, start] = server.messages;
    expect(connected).toEqual({ event: "connected", version: "1.0.0", connected: { "x-telnyx-streaming-auth-token": "st_token" } });
    expect(start).toMatchObject({
      event: "start",
      sequence_number: "1",
      stream_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      start: { call_control_id: id, call_session_id: standIn.call(id).callSessionId, user_id: standIn.userId, from: OWNED, to: CALLEE, client_state: "YWJj", media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 } },
    });
    expect(received("call.answered", id)).toHaveLength(1);
    expect(received("streaming.started", id)[0]!.body.data.payload).toMatchObject({ stream_url: STREAM });

    // 50 ms of a ramp: three 20 ms frames (the last padded), sent without pacing.
    const pcm = Int16Array.from({ length: 400 }, (_, i) => (i - 200) * 100);
    await standIn.play(id, pcm);
    await until("three media frames", () => server.messages.filter((m) => m.event === "media").length === 3);
    const media = server.messages.filter((m) => m.event === "media");
    expect(media.map((m) => [m.media.track, m.media.chunk, m.media.timestamp])).toEqual([
      ["inbound", "1", "0"],
      ["inbound", "2", "20"],
      ["inbound", "3", "40"],
    ]);
    expect(media.map((m) => m.sequence_number)).toEqual(["2", "3", "4"]);
    const decoded = media.map((m) => decodeMulaw(Buffer.from(m.media.payload, "base64")));
    expect(decoded.map((d) => d.length)).toEqual([160, 160, 160]);
    expect(Math.abs(decoded[0]![0]! - pcm[0]!)).toBeLessThan(1200); // mu-law is lossy
    expect(media.every((m) => m.stream_id === start.stream_id)).toBe(true);

    // What the application sends back: media is collected, a mark echoed, clear recorded.
    server.socket.send(JSON.stringify({ event: "media", media: { payload: Buffer.alloc(160, 0xff).toString("base64") } }));
    server.socket.send(JSON.stringify({ event: "mark", mark: { name: "greeting" } }));
    server.socket.send(JSON.stringify({ event: "clear" }));
    await until("the mark echoed", () => server.messages.some((m) => m.event === "mark"));
    expect(server.messages.find((m) => m.event === "mark")).toMatchObject({ stream_id: start.stream_id, mark: { name: "greeting" } });
    await until("media and clear collected", () => client!.audio.length === 1 && client!.events("clear").length === 1);
    expect(client!.audio[0]!.samples).toHaveLength(160);

    // Hanging the call up through the API ends the stream with stop, then streaming.stopped and call.hangup.
    const closed = new Promise<void>((resolve) => server.socket.once("close", () => resolve()));
    await telnyxClient().calls.actions.hangup(id, {});
    await standIn.idle();
    await closed;
    expect(server.messages.at(-1)).toMatchObject({ event: "stop", stream_id: start.stream_id, stop: { call_control_id: id, user_id: standIn.userId } });
    expect(standIn.call(id).webhooks.map((w) => w.eventType)).toEqual(["call.initiated", "call.answered", "streaming.started", "streaming.stopped", "call.hangup"]);
    expect(received("call.hangup", id)[0]!.body.data.payload).toMatchObject({ hangup_cause: "normal_clearing", hangup_source: "caller" });
  });

  it("opens an incoming call's stream when the application answers with a stream_url, and reports a refused upgrade with streaming.failed", async () => {
    const { callControlId } = await standIn.incomingCall(EVENTS, { from: CALLEE, to: OWNED });
    const streamsBefore = sockets.length;
    await telnyxClient().calls.actions.answer(callControlId, { stream_url: STREAM, stream_track: "inbound_track" });
    await standIn.idle();
    expect(sockets).toHaveLength(streamsBefore + 1);
    expect(standIn.call(callControlId).stream).toBeDefined();
    expect(standIn.call(callControlId).webhooks.map((w) => w.eventType)).toEqual(["call.initiated", "call.answered", "streaming.started"]);

    // A stream URL whose server answers the upgrade with a plain HTTP response (the webhook receiver).
    const refused = await standIn.incomingCall(EVENTS, { from: CALLEE, to: OWNED });
    const saved = standIn.rewrite;
    standIn.rewrite = (url) => (url.startsWith("wss://refusing.example") ? `ws://${new URL(receiver.url).host}/media/telnyx` : saved(url));
    try {
      await telnyxClient().calls.actions.answer(refused.callControlId, { stream_url: "wss://refusing.example/media/telnyx" });
      await standIn.idle();
    } finally {
      standIn.rewrite = saved;
    }
    const call = standIn.call(refused.callControlId);
    expect(call.stream).toBeUndefined();
    expect(call.streamError).toMatchObject({ status: 200 });
    expect(call.webhooks.at(-1)!.body.data).toMatchObject({ event_type: "streaming.failed", payload: { failure_reason: "connection_failed", stream_params: { stream_url: "wss://refusing.example/media/telnyx" } } });
  });
});
