import { createHash, createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tokenGenerate, verifySignature } from "@vonage/jwt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { bytesToPcm16, pcm16ToBytes } from "../../../engine/audio/pcm16.js";
import { verifyVonageSignedWebhook, vonageApiToken } from "../../../src/telephony/carriers/vonage/jwt.js";
import { until } from "../../helpers/until.js";
import { loopbackRewrite } from "../../helpers/standin-server.js";
import { vonageKeyPair, VonageStandIn } from "../../helpers/vonage-standin.js";

// The stand-in's own behaviour. Public URLs (parley.example) are only strings that get signed:
// every request goes to loopback through `rewrite`, and the stand-in refuses anything else.

const PUBLIC = "https://parley.example";
const OWNED = "+15550001111";
const CALLEE = "+15550002222";
const APPLICATION_ID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const keys = vonageKeyPair();
const standIn = new VonageStandIn({ applicationId: APPLICATION_ID, publicKeyPem: keys.publicKeyPem, signatureSecret: "standin-signature-secret", apiKey: "abcd1234" });

/** What the application side answers, recorded: one HTTP server for webhooks and WebSockets. */
interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
}
const received: Received[] = [];
const sockets: Array<{ socket: WebSocket; headers: http.IncomingHttpHeaders; text: any[]; binary: Buffer[] }> = [];
let answerNcco: unknown = [];
let app: http.Server;
let wss: WebSocketServer;

beforeAll(async () => {
  await standIn.start();
  app = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, rawBody: Buffer.concat(chunks).toString("utf8") });
      if (req.url?.startsWith("/carriers/vonage/answer")) {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify(answerNcco));
      }
      res.writeHead(204);
      res.end();
    });
  });
  wss = new WebSocketServer({ server: app });
  wss.on("connection", (socket, req) => {
    const entry = { socket, headers: req.headers, text: [] as any[], binary: [] as Buffer[] };
    sockets.push(entry);
    socket.on("message", (data, isBinary) => {
      if (isBinary) entry.binary.push(data as Buffer);
      else entry.text.push(JSON.parse(data.toString()));
    });
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  standIn.rewrite = loopbackRewrite(`http://127.0.0.1:${(app.address() as AddressInfo).port}`);
});
afterAll(async () => {
  await standIn.close();
  for (const s of sockets) s.socket.terminate();
  wss.close();
  await new Promise<void>((resolve) => app.close(() => resolve()));
});
beforeEach(() => {
  received.length = 0;
  sockets.length = 0;
});

const callsUrl = () => `${standIn.url}/v1/calls`;
const apiToken = () => vonageApiToken({ applicationId: APPLICATION_ID, privateKeyPem: keys.privateKeyPem, now: Date.now() });
const websocketNcco = (headers: Record<string, unknown> = {}) => [
  { action: "connect", from: OWNED, endpoint: [{ type: "websocket", uri: "wss://parley.example/media/vonage", "content-type": "audio/l16;rate=16000", headers }] },
];
const createBody = (over: Record<string, unknown> = {}) => ({
  to: [{ type: "phone", number: CALLEE }],
  from: { type: "phone", number: OWNED },
  ncco: websocketNcco({ token: "vt_1" }),
  event_url: [`${PUBLIC}/carriers/vonage/events`],
  ringing_timer: 30,
  ...over,
});

/** A Voice API request; `authorization` null sends none. */
function api(method: string, url: string, body: unknown, authorization: string | null = `Bearer ${apiToken()}`): Promise<Response> {
  return fetch(url, { method, headers: { ...(authorization === null ? {} : { authorization }), "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function createCall(over: Record<string, unknown> = {}): Promise<string> {
  const res = await api("POST", callsUrl(), createBody(over));
  expect(res.status).toBe(201);
  return ((await res.json()) as { uuid: string }).uuid;
}

const bearer = (headers: http.IncomingHttpHeaders) => String(headers.authorization).replace(/^Bearer /, "");
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));

describe("the Vonage stand-in's Voice API", () => {
  it("refuses a missing, forged, confused, expired or other application's token with Vonage's 401 error, creating nothing", async () => {
    const other = vonageKeyPair();
    const now = Date.now();
    const unsignedPart = (claims: object) => `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
    const claims = { application_id: APPLICATION_ID, iat: Math.floor(now / 1000), exp: Math.floor(now / 1000) + 900, jti: "j1" };
    // HS256 keyed with the public key (which anyone has): the classic algorithm confusion.
    const confused = `${unsignedPart(claims)}.${createHmac("sha256", keys.publicKeyPem).update(unsignedPart(claims)).digest("base64url")}`;
    const authorizations = [
      null,
      "",
      `Basic ${Buffer.from("key:secret").toString("base64")}`,
      "Bearer not.a.jwt",
      `Bearer ${vonageApiToken({ applicationId: APPLICATION_ID, privateKeyPem: other.privateKeyPem, now })}`,
      `Bearer ${vonageApiToken({ applicationId: "ffffffff-bbbb-4ccc-8ddd-eeeeeeeeeeee", privateKeyPem: keys.privateKeyPem, now })}`,
      `Bearer ${vonageApiToken({ applicationId: APPLICATION_ID, privateKeyPem: keys.privateKeyPem, now: now - 3_600_000 })}`,
      `Bearer ${confused}`,
      `Bearer ${unsignedPart(claims).replace(/^[^.]+/, Buffer.from('{"alg":"none"}').toString("base64url"))}.`,
    ];
    for (const authorization of authorizations) {
      const res = await api("POST", callsUrl(), createBody(), authorization);
      expect(res.status, String(authorization)).toBe(401);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ type: "https://developer.nexmo.com/api-errors#unauthorized", title: "Unauthorized", detail: expect.any(String) });
      expect(body.instance).toEqual(expect.any(String));
    }
    expect(standIn.calls.size).toBe(0);
    // Updates are guarded the same way.
    expect((await api("PUT", `${callsUrl()}/63f61863-4a51-4f6b-86e1-46edebcf9356`, { action: "hangup" }, null)).status).toBe(401);
  });

  it("creates a call with a token from Parley's signer or from Vonage's own library: 201, started, recorded", async () => {
    const uuid = await createCall({ machine_detection: "continue" });
    const call = standIn.call(uuid);
    expect(call).toMatchObject({ direction: "outbound", to: "15550002222", from: "15550001111", status: "started", eventUrl: `${PUBLIC}/carriers/vonage/events`, ringingTimer: 30, machineDetection: "continue" });
    expect(call.ncco).toEqual(websocketNcco({ token: "vt_1" }));
    expect(call.body.to).toEqual([{ type: "phone", number: CALLEE }]);

    const theirs = await api("POST", callsUrl(), createBody({ ncco: undefined, answer_url: [`${PUBLIC}/carriers/vonage/answer`] }), `Bearer ${tokenGenerate(APPLICATION_ID, keys.privateKeyPem)}`);
    expect(theirs.status).toBe(201);
    const created = (await theirs.json()) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(["conversation_uuid", "direction", "status", "uuid"]);
    expect(created).toMatchObject({ status: "started", direction: "outbound" });
    expect(created.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.conversation_uuid).toMatch(/^CON-[0-9a-f-]{36}$/);
    expect(standIn.call(created.uuid!)).toMatchObject({ answerUrl: `${PUBLIC}/carriers/vonage/answer`, ncco: undefined, answerMethod: "GET" });

    const read = await api("GET", `${callsUrl()}/${uuid}`, undefined);
    expect(await read.json()).toMatchObject({ uuid, conversation_uuid: call.conversationUuid, status: "started", direction: "outbound", to: { type: "phone", number: "15550002222" } });
    standIn.calls.clear();
  });

  it("refuses a call without to, from, or with both or neither of ncco and answer_url, with Vonage's 400", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ to: undefined }, "to"],
      [{ to: [{ type: "phone", number: "not a number" }] }, "to"],
      [{ from: undefined }, "from"],
      [{ ncco: undefined }, "ncco"],
      [{ answer_url: [`${PUBLIC}/carriers/vonage/answer`] }, "ncco"],
      [{ event_url: `${PUBLIC}/carriers/vonage/events` }, "event_url"],
      [{ ringing_timer: 500 }, "ringing_timer"],
    ];
    for (const [over, name] of cases) {
      const res = await api("POST", callsUrl(), createBody(over));
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ title: "Bad Request", invalid_parameters: [{ name }] });
    }
    const notJson = await fetch(callsUrl(), { method: "POST", headers: { authorization: `Bearer ${apiToken()}`, "content-type": "application/json" }, body: "{" });
    expect(notJson.status).toBe(400);
    expect(standIn.calls.size).toBe(0);
  });

  it("records updates: hangup 204 (cancelled before answer, event sent), transfer 204 with its NCCO, 404 for an unknown uuid", async () => {
    const uuid = await createCall();
    await standIn.event(uuid, "ringing");
    const hangup = await api("PUT", `${callsUrl()}/${uuid}`, { action: "hangup" });
    expect(hangup.status).toBe(204);
    expect(await hangup.text()).toBe("");
    await standIn.idle();
    const call = standIn.call(uuid);
    expect(call.updates).toEqual([{ action: "hangup" }]);
    expect(call.status).toBe("cancelled");
    expect(call.events.map((e) => e.payload.status)).toEqual(["ringing", "cancelled"]);
    // A transfer of a call that has ended is refused.
    expect((await api("PUT", `${callsUrl()}/${uuid}`, { action: "transfer", destination: { type: "ncco", ncco: [{ action: "talk", text: "hi" }] } })).status).toBe(400);

    const live = await createCall();
    await standIn.event(live, "answered");
    const transferNcco = [{ action: "connect", from: OWNED, endpoint: [{ type: "phone", number: "15550003333" }] }];
    const transfer = await api("PUT", `${callsUrl()}/${live}`, { action: "transfer", destination: { type: "ncco", ncco: transferNcco } });
    expect(transfer.status).toBe(204);
    expect(standIn.call(live)).toMatchObject({ ncco: transferNcco, dialed: { type: "phone", number: "15550003333" }, updates: [{ action: "transfer", destination: { type: "ncco", ncco: transferNcco } }] });
    expect((await api("PUT", `${callsUrl()}/${live}`, { action: "explode" })).status).toBe(400);

    const unknown = await api("PUT", `${callsUrl()}/63f61863-4a51-4f6b-86e1-46edebcf9356`, { action: "hangup" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ type: "https://developer.nexmo.com/api-errors#not-found", title: "Not Found" });
    standIn.calls.clear();
  });

  it("answers a failure it was told to give, after authentication", async () => {
    standIn.failNext(1, 503);
    expect((await api("POST", callsUrl(), createBody())).status).toBe(503);
    expect((await api("POST", callsUrl(), createBody(), "Bearer x")).status).toBe(401);
    expect(standIn.calls.size).toBe(0);
  });
});

describe("the Vonage stand-in towards the application", () => {
  it("signs event webhooks as Vonage does: a JWT that @vonage/jwt and Parley's verifier accept, bound to the body", async () => {
    const uuid = await createCall();
    const sent = await standIn.event(uuid, "answered");
    expect(sent?.status).toBe(204);
    const hit = received.at(-1)!;
    expect(hit).toMatchObject({ method: "POST", url: "/carriers/vonage/events" });
    expect(hit.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(hit.rawBody);
    expect(body).toMatchObject({ uuid, conversation_uuid: standIn.call(uuid).conversationUuid, status: "answered", direction: "outbound", from: "15550001111", to: "15550002222" });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);

    const token = bearer(hit.headers);
    expect(verifySignature(token, standIn.signatureSecret)).toBe(true);
    expect(verifySignature(token, "another-secret")).toBe(false);
    const claims = claimsOf(token);
    expect(claims).toMatchObject({ iss: "Vonage", api_key: "abcd1234", application_id: APPLICATION_ID, payload_hash: createHash("sha256").update(hit.rawBody).digest("hex") });
    expect(claims.jti).toEqual(expect.any(String));
    const check = { authorization: hit.headers.authorization, signatureSecret: standIn.signatureSecret, rawBody: hit.rawBody, now: Date.now(), applicationId: APPLICATION_ID };
    expect(verifyVonageSignedWebhook(check)).toBe(true);
    expect(verifyVonageSignedWebhook({ ...check, rawBody: hit.rawBody.replace("answered", "completed") })).toBe(false);
    expect(verifyVonageSignedWebhook({ ...check, signatureSecret: "another-secret" })).toBe(false);

    const final = await standIn.event(uuid, "busy", { detail: "busy" });
    expect(final?.payload).toMatchObject({ status: "busy", detail: "busy", duration: expect.any(String), end_time: expect.any(String) });
    expect(standIn.call(uuid).events.map((e) => e.payload.status)).toEqual(["answered", "busy"]);
    standIn.calls.clear();
  });

  it("sends the answer webhook of an incoming call as a signed GET without payload_hash, and takes the NCCO answered", async () => {
    answerNcco = websocketNcco({ token: "vt_in" });
    const incoming = await standIn.incomingCall(`${PUBLIC}/carriers/vonage/answer`, { from: CALLEE, to: OWNED, eventUrl: `${PUBLIC}/carriers/vonage/events` });
    expect(incoming.status).toBe(200);
    expect(incoming.ncco).toEqual(answerNcco);
    const hit = received.at(-1)!;
    expect(hit.method).toBe("GET");
    expect(hit.rawBody).toBe("");
    const query = new URL(hit.url, "http://x").searchParams;
    expect(Object.fromEntries(query)).toMatchObject({ to: "15550001111", from: "15550002222", uuid: incoming.uuid, conversation_uuid: incoming.conversationUuid });
    const token = bearer(hit.headers);
    expect(verifySignature(token, standIn.signatureSecret)).toBe(true);
    expect(claimsOf(token).payload_hash).toBeUndefined();
    expect(verifyVonageSignedWebhook({ authorization: hit.headers.authorization, signatureSecret: standIn.signatureSecret, rawBody: "", now: Date.now(), applicationId: APPLICATION_ID })).toBe(true);
    // Without payload_hash the token cannot vouch for a body.
    expect(verifyVonageSignedWebhook({ authorization: hit.headers.authorization, signatureSecret: standIn.signatureSecret, rawBody: '{"status":"completed"}', now: Date.now() })).toBe(false);
    expect(standIn.call(incoming.uuid)).toMatchObject({ direction: "inbound", status: "ringing", ncco: answerNcco });
    standIn.calls.clear();
  });

  it("refuses to reach an address that is not loopback (no rewrite), before connecting", async () => {
    const alone = new VonageStandIn({ publicKeyPem: keys.publicKeyPem });
    await expect(alone.incomingCall(`${PUBLIC}/carriers/vonage/answer`, { from: CALLEE, to: OWNED })).rejects.toThrow(/only connects to loopback/);
    await expect(alone.connectWebsocket(websocketNcco())).rejects.toThrow(/only connects to loopback/);
    await expect(standIn.connectWebsocket([{ action: "talk", text: "no socket" }])).rejects.toThrow(/no connect action/);
  });
});

describe("the Vonage stand-in's WebSocket", () => {
  it("opens the endpoint's uri, sends websocket:connected with its headers, then 640-byte L16 frames, and collects what comes back", async () => {
    const client = await standIn.connectWebsocket(websocketNcco({ token: "vt_ws", call_id: "call_1" }));
    await until("the first message", () => sockets[0]?.text.length === 1);
    const server = sockets[0]!;
    expect(server.text[0]).toEqual({ event: "websocket:connected", "content-type": "audio/l16;rate=16000", token: "vt_ws", call_id: "call_1" });
    expect(server.headers.authorization).toBeUndefined();

    const samples = new Int16Array(1600).map((_, i) => Math.round(8000 * Math.sin(i / 5)));
    client.sendUnpaced(samples);
    await until("five frames", () => server.binary.length === 5);
    expect(server.binary.every((b) => b.length === 640)).toBe(true);
    expect(bytesToPcm16(new Uint8Array(Buffer.concat(server.binary)))).toEqual(samples);

    // The application speaks, then asks to be told when it is played out, then clears.
    const reply = new Int16Array(320).fill(1234);
    server.socket.send(pcm16ToBytes(reply), { binary: true });
    server.socket.send(JSON.stringify({ action: "notify", payload: { mark: "m1" } }));
    server.socket.send(JSON.stringify({ action: "clear" }));
    await until("notify and cleared answered", () => server.text.length === 3);
    expect(server.text.slice(1)).toEqual([{ event: "websocket:notify", payload: { mark: "m1" } }, { event: "websocket:cleared" }]);
    expect(client.audio.map((a) => [...a.samples])).toEqual([[...reply]]);
    expect(client.actions("notify")).toEqual([{ action: "notify", payload: { mark: "m1" } }]);
    expect(client.actions("clear")).toHaveLength(1);
    client.close();
    await client.closed;
  });

  it("puts an endpoint's authorization in the upgrade: a signed token for type vonage, the value for custom", async () => {
    const withAuth = (authorization: Record<string, unknown>) => [{ action: "connect", endpoint: [{ type: "websocket", uri: "wss://parley.example/media/vonage", "content-type": "audio/l16;rate=16000", authorization }] }];
    const a = await standIn.connectWebsocket(withAuth({ type: "vonage" }));
    const b = await standIn.connectWebsocket(withAuth({ type: "custom", value: "Bearer my-own" }));
    await until("two sockets", () => sockets.length === 2);
    const token = bearer(sockets[0]!.headers);
    expect(verifyVonageSignedWebhook({ authorization: sockets[0]!.headers.authorization, signatureSecret: standIn.signatureSecret, rawBody: "", now: Date.now(), applicationId: APPLICATION_ID })).toBe(true);
    expect(verifySignature(token, standIn.signatureSecret)).toBe(true);
    expect(sockets[1]!.headers.authorization).toBe("Bearer my-own");
    a.close();
    b.close();
  });

  it("runs an outbound call: answered event, the answer_url's NCCO fetched, its socket opened, closed and completed by an API hang-up", async () => {
    answerNcco = websocketNcco({ token: "vt_out" });
    const uuid = await createCall({ ncco: undefined, answer_url: [`${PUBLIC}/carriers/vonage/answer`] });
    const client = await standIn.answer(uuid);
    expect(received.map((r) => `${r.method} ${new URL(r.url, "http://x").pathname}`)).toEqual(["POST /carriers/vonage/events", "GET /carriers/vonage/answer"]);
    await until("the socket", () => sockets[0]?.text.length === 1);
    expect(sockets[0]!.text[0]).toMatchObject({ event: "websocket:connected", token: "vt_out" });
    expect(standIn.call(uuid)).toMatchObject({ status: "answered", stream: client });
    await standIn.play(uuid, new Int16Array(640));
    await until("two frames", () => sockets[0]!.binary.length === 2);

    const closed = new Promise<number>((resolve) => sockets[0]!.socket.once("close", (code) => resolve(code)));
    expect((await api("PUT", `${callsUrl()}/${uuid}`, { action: "hangup" })).status).toBe(204);
    await standIn.idle();
    expect(await closed).toBe(1000);
    expect(standIn.call(uuid).events.map((e) => e.payload.status)).toEqual(["answered", "completed"]);
    expect(JSON.parse(received.at(-1)!.rawBody)).toMatchObject({ uuid, status: "completed" });
    standIn.calls.clear();
  });
});
