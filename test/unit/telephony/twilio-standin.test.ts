import type { AddressInfo } from "node:net";
import type { IncomingHttpHeaders } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import twilio from "twilio";
import { WebSocketServer, type WebSocket } from "ws";
import { decodeMulaw } from "../../../engine/audio/mulaw.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../helpers/webhook-receiver.js";
import { loopbackRewrite } from "../../helpers/standin-server.js";
import { TwilioStandIn } from "../../helpers/twilio-standin.js";
import { readConnectStream, readDial } from "../../helpers/twiml-read.js";
import { until } from "../../helpers/until.js";

// The stand-in's own behaviour. Public URLs (parley.example) are only strings that get signed:
// every request goes to loopback through `rewrite`, and the stand-in refuses anything else.

const PUBLIC = "https://parley.example";
const OWNED = "+15550001111";
const CALLEE = "+15550002222";

const standIn = new TwilioStandIn({ accountSid: "AC" + "1".repeat(32), authToken: "standin-auth-token" });
let receiver: WebhookReceiver;

beforeAll(async () => {
  await standIn.start();
  receiver = await startWebhookReceiver("/");
  standIn.rewrite = loopbackRewrite(receiver.url);
});
afterAll(async () => {
  await standIn.close();
  await receiver.close();
});
afterEach(() => receiver.answer(() => ({ status: 200, body: "" })));

const basic = (user: string, password: string) => "Basic " + Buffer.from(`${user}:${password}`).toString("base64");
const auth = () => basic(standIn.accountSid, standIn.authToken);
const callsUrl = () => `${standIn.url}/2010-04-01/Accounts/${standIn.accountSid}/Calls.json`;

function post(url: string, form: Record<string, string | string[]>, authorization = auth()): Promise<Response> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
  return fetch(url, { method: "POST", headers: { authorization, "content-type": "application/x-www-form-urlencoded" }, body });
}

/** Twilio's own client library, pointed at the stand-in: it parses what the stand-in answers. */
function twilioClient(authToken = standIn.authToken): ReturnType<typeof twilio> {
  const client = twilio(standIn.accountSid, authToken);
  client.api.baseUrl = standIn.url;
  // Never past loopback, whatever a resource's base URL would be.
  const request = client.request.bind(client);
  client.request = (opts) => {
    if (!String(opts.uri).startsWith(standIn.url + "/")) throw new Error(`not the stand-in: ${opts.uri}`);
    return request(opts);
  };
  return client;
}

/** What `validateRequest` says of a request the stand-in sent to `publicUrl`. */
function signedByTwilio(headers: IncomingHttpHeaders, publicUrl: string, rawBody: string): boolean {
  const params = Object.fromEntries(new URLSearchParams(rawBody));
  return twilio.validateRequest(standIn.authToken, String(headers["x-twilio-signature"]), publicUrl, params);
}

describe("the Twilio stand-in's REST API", () => {
  standIn.addNumber(OWNED);

  it("refuses a wrong auth token, no credentials, and another account's path with Twilio's 401 error", async () => {
    for (const authorization of [basic(standIn.accountSid, "wrong-token"), ""]) {
      const res = await post(callsUrl(), { To: CALLEE, From: OWNED, Twiml: "<Response/>" }, authorization);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
      expect(await res.json()).toEqual({ code: 20003, message: "Authenticate", more_info: "https://www.twilio.com/docs/errors/20003", status: 401 });
    }
    const other = await post(callsUrl().replace(standIn.accountSid, "AC" + "2".repeat(32)), { To: CALLEE, From: OWNED, Twiml: "<Response/>" });
    expect(other.status).toBe(401);
    await expect(twilioClient("wrong-token").calls.create({ to: CALLEE, from: OWNED, twiml: "<Response/>" }).catch((e) => e)).resolves.toMatchObject({ status: 401, code: 20003 });
    expect([...standIn.calls.values()].filter((c) => c.direction === "outbound-api")).toHaveLength(0);
  });

  it("creates a call with Twilio's client library: 201, a queued call resource, and records its parameters", async () => {
    const call = await twilioClient().calls.create({
      to: CALLEE,
      from: OWNED,
      twiml: '<Response><Connect><Stream url="wss://parley.example/media/twilio"/></Connect></Response>',
      statusCallback: `${PUBLIC}/carriers/twilio/status`,
      statusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
      statusCallbackMethod: "POST",
      machineDetection: "Enable",
    });
    expect(call.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(call).toMatchObject({ status: "queued", to: CALLEE, from: OWNED, direction: "outbound-api", accountSid: standIn.accountSid, apiVersion: "2010-04-01" });
    expect(call.dateCreated).toBeInstanceOf(Date);
    const recorded = standIn.call(call.sid);
    expect(recorded.statusCallbackEvents).toEqual(["initiated", "ringing", "answered", "completed"]);
    expect(recorded).toMatchObject({ statusCallback: `${PUBLIC}/carriers/twilio/status`, machineDetection: "Enable", status: "queued" });
    expect(recorded.params.StatusCallbackEvent).toEqual(["initiated", "ringing", "answered", "completed"]);
    standIn.calls.delete(call.sid);
  });

  it("refuses a call without To, without TwiML or Url, from a number the account does not own, or with TwiML over 4000 characters", async () => {
    const cases: Array<[Record<string, string>, number]> = [
      [{ From: OWNED, Twiml: "<Response/>" }, 21201],
      [{ To: CALLEE, From: OWNED }, 21205],
      [{ To: CALLEE, From: "+15559999999", Twiml: "<Response/>" }, 21210],
      [{ To: CALLEE, From: OWNED, Twiml: `<Response><Say>${"a".repeat(4000)}</Say></Response>` }, 32018],
    ];
    for (const [form, code] of cases) {
      const res = await post(callsUrl(), form);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code, status: 400 });
    }
    expect(standIn.calls.size).toBe(0);
  });

  it("hangs up a call (Status=completed): 200, the stream ended and the final callback sent, signed", async () => {
    const created = await post(callsUrl(), { To: CALLEE, From: OWNED, Twiml: "<Response/>", StatusCallback: `${PUBLIC}/carriers/twilio/status?call=c1` });
    expect(created.status).toBe(201);
    const { sid } = (await created.json()) as { sid: string };
    const before = receiver.received.length;
    // Not asked for (StatusCallbackEvent defaults to completed): not sent, but the call is answered.
    expect(await standIn.statusCallback(sid, "in-progress")).toBeUndefined();
    expect(receiver.received).toHaveLength(before);
    const res = await post(`${standIn.url}/2010-04-01/Accounts/${standIn.accountSid}/Calls/${sid}.json`, { Status: "completed" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ sid, status: "completed" });
    await standIn.idle();
    const [callback] = receiver.received.slice(before);
    expect(callback).toBeDefined();
    const form = Object.fromEntries(new URLSearchParams(callback!.rawBody));
    expect(form).toMatchObject({ CallSid: sid, AccountSid: standIn.accountSid, CallStatus: "completed", From: OWNED, To: CALLEE, Direction: "outbound-api", CallDuration: expect.stringMatching(/^\d+$/) });
    expect(signedByTwilio(callback!.headers, `${PUBLIC}/carriers/twilio/status?call=c1`, callback!.rawBody)).toBe(true);
    expect(signedByTwilio(callback!.headers, `${PUBLIC}/carriers/twilio/status?call=c2`, callback!.rawBody)).toBe(false);
    expect(standIn.call(sid).updates).toEqual([{ Status: "completed" }]);
    // Redirecting an ended call is refused, as Twilio does.
    const late = await post(`${standIn.url}/2010-04-01/Accounts/${standIn.accountSid}/Calls/${sid}.json`, { Twiml: "<Response><Hangup/></Response>" });
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ code: 21220 });
  });

  it("redirects a live call with <Dial> TwiML (transfer), and answers 404 (20404) for a call it does not know", async () => {
    const call = await twilioClient().calls.create({ to: CALLEE, from: OWNED, twiml: "<Response/>" });
    const updated = await twilioClient().calls(call.sid).update({ twiml: "<Response><Dial><Number>+15550003333</Number></Dial></Response>" });
    expect(updated.status).toBe("queued");
    expect(standIn.call(call.sid)).toMatchObject({ dialed: "+15550003333", twiml: "<Response><Dial><Number>+15550003333</Number></Dial></Response>" });
    const unknown = await post(`${standIn.url}/2010-04-01/Accounts/${standIn.accountSid}/Calls/CA${"0".repeat(32)}.json`, { Status: "completed" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 20404, status: 404, more_info: "https://www.twilio.com/docs/errors/20404" });
  });

  it("lists the account's numbers by PhoneNumber and sets a number's voice URL, through Twilio's client library", async () => {
    standIn.addNumber("+15550004444");
    const client = twilioClient();
    const [number, ...more] = await client.incomingPhoneNumbers.list({ phoneNumber: OWNED });
    expect(more).toHaveLength(0);
    expect(number).toMatchObject({ phoneNumber: OWNED, sid: expect.stringMatching(/^PN[0-9a-f]{32}$/) });
    const updated = await client.incomingPhoneNumbers(number!.sid).update({ voiceUrl: `${PUBLIC}/carriers/twilio/voice`, voiceMethod: "POST" });
    expect(updated).toMatchObject({ voiceUrl: `${PUBLIC}/carriers/twilio/voice`, voiceMethod: "POST" });
    expect(standIn.numbers.get(number!.sid)!.updates).toEqual([{ VoiceUrl: `${PUBLIC}/carriers/twilio/voice`, VoiceMethod: "POST" }]);
    expect(await client.incomingPhoneNumbers.list({ phoneNumber: "+15550009999" })).toHaveLength(0);
  });

  it("answers Twilio's 500 error to the requests failNext names, then serves again", async () => {
    standIn.failNext(1);
    const failed = await post(callsUrl(), { To: CALLEE, From: OWNED, Twiml: "<Response/>" });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ code: 20500, status: 500 });
    expect((await post(callsUrl(), { To: CALLEE, From: OWNED, Twiml: "<Response/>" })).status).toBe(201);
  });
});

describe("the stand-in driving calls as Twilio does", () => {
  it("sends status callbacks only for the events the call asked for, signed so that validateRequest accepts them", async () => {
    const call = await twilioClient().calls.create({ to: CALLEE, from: OWNED, twiml: "<Response/>", statusCallback: `${PUBLIC}/carriers/twilio/status`, statusCallbackEvent: ["ringing"] });
    const before = receiver.received.length;
    expect(await standIn.statusCallback(call.sid, "initiated")).toBeUndefined();
    const ringing = await standIn.statusCallback(call.sid, "ringing");
    const busy = await standIn.statusCallback(call.sid, "busy");
    expect([ringing?.status, busy?.status]).toEqual([200, 200]);
    const sent = receiver.received.slice(before);
    expect(sent.map((r) => new URLSearchParams(r.rawBody).get("CallStatus"))).toEqual(["ringing", "busy"]);
    expect(sent.map((r) => new URLSearchParams(r.rawBody).get("SequenceNumber"))).toEqual(["0", "1"]);
    for (const r of sent) expect(signedByTwilio(r.headers, `${PUBLIC}/carriers/twilio/status`, r.rawBody)).toBe(true);
    expect(standIn.call(call.sid).status).toBe("busy");
  });

  it("posts the voice webhook of an incoming call, signed, and gives back the TwiML answered", async () => {
    const twiml = '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://parley.example/media/twilio"/></Connect></Response>';
    receiver.answer(() => ({ status: 200, headers: { "content-type": "text/xml" }, body: twiml }));
    const before = receiver.received.length;
    const answered = await standIn.incomingCall(`${PUBLIC}/carriers/twilio/voice`, { from: CALLEE, to: OWNED });
    expect(answered).toMatchObject({ status: 200, twiml, contentType: "text/xml" });
    const [hook] = receiver.received.slice(before);
    expect(Object.fromEntries(new URLSearchParams(hook!.rawBody))).toMatchObject({ CallSid: answered.callSid, AccountSid: standIn.accountSid, From: CALLEE, To: OWNED, Direction: "inbound", CallStatus: "ringing" });
    expect(signedByTwilio(hook!.headers, `${PUBLIC}/carriers/twilio/voice`, hook!.rawBody)).toBe(true);
    expect(standIn.call(answered.callSid)).toMatchObject({ direction: "inbound", twiml });
  });

  it("fetches the TwiML of an outbound call created with a Url: a signed request, with AnsweredBy when it asked for machine detection", async () => {
    const twiml = '<Response><Connect><Stream url="wss://parley.example/media/twilio"/></Connect></Response>';
    const call = await twilioClient().calls.create({ to: CALLEE, from: OWNED, url: `${PUBLIC}/carriers/twilio/twiml`, statusCallback: `${PUBLIC}/carriers/twilio/status`, statusCallbackEvent: ["answered"], machineDetection: "Enable" });
    receiver.answer(() => ({ status: 200, headers: { "content-type": "text/xml" }, body: twiml }));
    const before = receiver.received.length;
    expect(await standIn.twimlOf(call.sid, "human")).toBe(twiml);
    const [fetched] = receiver.received.slice(before);
    expect(Object.fromEntries(new URLSearchParams(fetched!.rawBody))).toMatchObject({ CallSid: call.sid, CallStatus: "in-progress", AnsweredBy: "human", Direction: "outbound-api" });
    expect(signedByTwilio(fetched!.headers, `${PUBLIC}/carriers/twilio/twiml`, fetched!.rawBody)).toBe(true);
  });

  it("refuses to reach an address that is not loopback (no rewrite), before connecting", async () => {
    const alone = new TwilioStandIn();
    alone.addNumber(OWNED);
    await expect(alone.incomingCall(`${PUBLIC}/carriers/twilio/voice`, { from: CALLEE, to: OWNED })).rejects.toThrow(/only connects to loopback/);
    await expect(alone.connectStream('<Response><Connect><Stream url="wss://parley.example/media/twilio"/></Connect></Response>')).rejects.toThrow(/only connects to loopback/);
  });
});

describe("the stand-in's media stream", () => {
  let wss: WebSocketServer;
  let wsPort = 0;
  const sockets: Array<{ socket: WebSocket; headers: IncomingHttpHeaders; url: string; messages: any[] }> = [];

  beforeAll(async () => {
    wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    wsPort = (wss.address() as AddressInfo).port;
    wss.on("connection", (socket, req) => {
      const entry = { socket, headers: req.headers, url: req.url ?? "", messages: [] as any[] };
      sockets.push(entry);
      socket.on("message", (data) => entry.messages.push(JSON.parse(data.toString())));
    });
  });
  afterAll(() => new Promise<void>((resolve) => wss.close(() => resolve())));

  it("runs <Connect><Stream>: a signed upgrade, connected, start with the Parameters, media frames, mark echoes, stop", async () => {
    const call = await twilioClient().calls.create({ to: CALLEE, from: OWNED, twiml: "<Response/>" });
    const twiml = '<Response><Connect><Stream url="wss://parley.example/media/twilio"><Parameter name="token" value="mt_a&amp;b"/><Parameter name="agent_id" value="agt_1"/></Stream></Connect></Response>';
    const rewrite = (url: string) => url.replace("wss://parley.example", `ws://127.0.0.1:${wsPort}`);
    const client = await standIn.connectStream(twiml, { callSid: call.sid, rewrite });
    await until("connected and start", () => sockets.length === 1 && sockets[0]!.messages.length >= 2);
    const server = sockets[0]!;
    expect(server.url).toBe("/media/twilio");
    expect(twilio.validateRequest(standIn.authToken, String(server.headers["x-twilio-signature"]), "wss://parley.example/media/twilio", {})).toBe(true);
    const [connected, start] = server.messages;
    expect(connected).toMatchObject({ event: "connected", protocol: "Call", version: "1.0.0" });
    expect(start).toMatchObject({
      event: "start",
      streamSid: expect.stringMatching(/^MZ[0-9a-f]{32}$/),
      start: { callSid: call.sid, accountSid: standIn.accountSid, customParameters: { token: "mt_a&b", agent_id: "agt_1" }, mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } },
    });

    // 50 ms of a ramp: three 20 ms frames (the last padded), sent without pacing.
    const pcm = Int16Array.from({ length: 400 }, (_, i) => (i - 200) * 100);
    await standIn.play(call.sid, pcm);
    await until("three media frames", () => server.messages.filter((m) => m.event === "media").length === 3);
    const media = server.messages.filter((m) => m.event === "media");
    const decoded = media.map((m) => decodeMulaw(Buffer.from(m.media.payload, "base64")));
    expect(decoded.map((d) => d.length)).toEqual([160, 160, 160]);
    expect(Math.abs(decoded[0]![0]! - pcm[0]!)).toBeLessThan(1200); // mu-law is lossy
    expect(media.every((m) => m.streamSid === start.streamSid && m.media.track === "inbound")).toBe(true);

    // What the application sends back: media is collected, a mark is echoed as Twilio does.
    server.socket.send(JSON.stringify({ event: "media", streamSid: start.streamSid, media: { payload: Buffer.alloc(160, 0xff).toString("base64") } }));
    server.socket.send(JSON.stringify({ event: "mark", streamSid: start.streamSid, mark: { name: "greeting" } }));
    server.socket.send(JSON.stringify({ event: "clear", streamSid: start.streamSid }));
    await until("the mark echoed", () => server.messages.some((m) => m.event === "mark"));
    expect(server.messages.find((m) => m.event === "mark")).toMatchObject({ streamSid: start.streamSid, mark: { name: "greeting" } });
    await until("media and clear collected", () => client.audio.length === 1 && client.messages.some((m) => m.message.event === "clear"));
    expect(client.audio[0]!.samples).toHaveLength(160);

    // Hanging the call up through the API ends the stream with stop.
    const closed = new Promise<void>((resolve) => server.socket.once("close", () => resolve()));
    await twilioClient().calls(call.sid).update({ status: "completed" });
    await standIn.idle();
    await closed;
    expect(server.messages.at(-1)).toMatchObject({ event: "stop", stop: { callSid: call.sid, accountSid: standIn.accountSid } });
  });
});

describe("reading TwiML as Twilio would", () => {
  it("takes a <Connect><Stream> with its Parameters, and refuses ws://, a query string, a one-way <Start><Stream> or no <Response>", () => {
    expect(readConnectStream(`<?xml version="1.0"?>\n<Response>\n<Connect><Stream url='wss://h/media/twilio'><Parameter name="a" value="1" /></Stream></Connect></Response>`)).toEqual({ url: "wss://h/media/twilio", parameters: { a: "1" } });
    expect(() => readConnectStream('<Response><Connect><Stream url="ws://h/media/twilio"/></Connect></Response>')).toThrow(/wss/);
    expect(() => readConnectStream('<Response><Connect><Stream url="wss://h/media/twilio?token=x"/></Connect></Response>')).toThrow(/query string/);
    expect(() => readConnectStream('<Response><Start><Stream url="wss://h/media/twilio"/></Start></Response>')).toThrow(/no <Connect>/);
    expect(() => readConnectStream("not twiml")).toThrow(/not a TwiML/);
  });

  it("reads what a <Dial> calls, bare or in a <Number>", () => {
    expect(readDial("<Response><Dial>+15550003333</Dial></Response>")).toBe("+15550003333");
    expect(readDial('<Response><Dial callerId="+1"><Number>+15550003333</Number></Dial></Response>')).toBe("+15550003333");
    expect(readDial("<Response><Hangup/></Response>")).toBeUndefined();
  });
});
