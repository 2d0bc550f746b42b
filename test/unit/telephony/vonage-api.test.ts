import { createPrivateKey } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@vonage/jwt";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CarrierApiError } from "../../../src/telephony/carriers/carrier-http.js";
import { connectWebsocketNcco, transferNcco } from "../../../src/telephony/carriers/vonage/ncco.js";
import { VonageApi, type VonageApiOptions, type VonageCreateCallRequest } from "../../../src/telephony/carriers/vonage/vonage-api.js";
import { vonageKeyPair, VonageStandIn } from "../../helpers/vonage-standin.js";

// VonageApi against the Vonage stand-in (Vonage's Voice API on 127.0.0.1, RS256 tokens checked
// with @vonage/jwt), and against small loopback servers for what the stand-in does not do.

const APPLICATION_ID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const keys = vonageKeyPair();
const otherKeys = vonageKeyPair();
const privateKey = createPrivateKey(keys.privateKeyPem);
const NCCO = connectWebsocketNcco("wss://parley.example/media/vonage", { stream_token: "cst_x" });
const EVENT_URL = "https://parley.example/carriers/vonage/events?call_id=call_1";

const standIn = new VonageStandIn({ publicKeyPem: keys.publicKeyPem, applicationId: APPLICATION_ID });
const api = (options: Partial<VonageApiOptions> = {}) => new VonageApi({ applicationId: APPLICATION_ID, privateKey, apiUrl: standIn.url, timeoutMs: 5000, ...options });
const callRequest = (extra: Partial<VonageCreateCallRequest> = {}): VonageCreateCallRequest => ({ to: "+15550002222", from: "+15550001111", ncco: NCCO, eventUrl: EVENT_URL, ...extra });

/** The CarrierApiError a promise rejects with (fails the test when it resolves or throws anything else). */
async function failure(promise: Promise<unknown>): Promise<CarrierApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CarrierApiError);
  return err as CarrierApiError;
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function loopbackServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

beforeAll(() => standIn.start());
afterAll(() => standIn.close());
afterEach(() => standIn.idle());

describe("VonageApi against the Vonage stand-in", () => {
  it("creates a call with phone endpoints (no +), the NCCO, the event URL (POST) and the ringing timer", async () => {
    const created = await api().createCall(callRequest({ ringingTimerSeconds: 30 }));
    const call = standIn.call(created.uuid);
    expect(created).toEqual({ uuid: call.uuid, status: "started" });
    expect(standIn.requests.at(-1)).toMatchObject({ method: "POST", path: "/v1/calls", status: 201 });
    expect(call.body).toEqual({
      to: [{ type: "phone", number: "15550002222" }],
      from: { type: "phone", number: "15550001111" },
      ncco: NCCO,
      event_url: [EVENT_URL],
      event_method: "POST",
      ringing_timer: 30,
    });
    expect(call.ncco).toEqual([{ action: "connect", endpoint: [{ type: "websocket", uri: "wss://parley.example/media/vonage", "content-type": "audio/l16;rate=16000", headers: { stream_token: "cst_x" } }] }]);
  });

  it("keeps the ringing timer within Vonage's 1-120 s and leaves it out when not asked for", async () => {
    const long = await api().createCall(callRequest({ ringingTimerSeconds: 600 }));
    expect(standIn.call(long.uuid).ringingTimer).toBe(120);
    const short = await api().createCall(callRequest({ ringingTimerSeconds: 0.2 }));
    expect(standIn.call(short.uuid).ringingTimer).toBe(1);
    const none = await api().createCall(callRequest());
    expect("ringing_timer" in standIn.call(none.uuid).body).toBe(false);
  });

  it("hangs up (PUT action hangup) and transfers (PUT action transfer with an NCCO)", async () => {
    const { uuid } = await api().createCall(callRequest());
    await api().transfer(uuid, transferNcco("+15550003333"));
    expect(standIn.requests.at(-1)).toMatchObject({ method: "PUT", path: `/v1/calls/${uuid}`, status: 204 });
    expect(standIn.call(uuid).dialed).toEqual({ type: "phone", number: "15550003333" });
    await api().hangUp(uuid);
    expect(standIn.call(uuid).updates).toEqual([
      { action: "transfer", destination: { type: "ncco", ncco: [{ action: "connect", endpoint: [{ type: "phone", number: "15550003333" }] }] } },
      { action: "hangup" },
    ]);
    expect(standIn.call(uuid).status).toBe("cancelled");
  });

  it("maps Vonage's RFC 7807 errors: another application's key 401, an unknown call 404, a failure 500", async () => {
    const forged = await failure(api({ privateKey: createPrivateKey(otherKeys.privateKeyPem) }).createCall(callRequest()));
    expect(forged).toMatchObject({ status: 401, code: "unauthorized", message: "Unauthorized: You did not provide correct credentials.", moreInfo: "https://developer.nexmo.com/api-errors#unauthorized" });
    const otherApp = await failure(api({ applicationId: "ffffffff-4e5f-4a6b-8c7d-9e0f1a2b3c4d" }).createCall(callRequest()));
    expect(otherApp.status).toBe(401);

    const unknown = await failure(api().hangUp("99999999-4e5f-4a6b-8c7d-9e0f1a2b3c4d"));
    expect(unknown).toMatchObject({ status: 404, code: "not-found" });
    expect(unknown.message).toContain("doesn't exist");

    standIn.failNext(1, 500);
    expect(await failure(api().createCall(callRequest()))).toMatchObject({ status: 500, code: "internal-error" });
  });

  it("refuses a malformed call UUID or number without sending anything", async () => {
    const before = standIn.requests.length;
    const good = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    for (const uuid of ["", good + "0", good.slice(1), good + "\n", `../calls/${good}`, `${good}/../../v2`, `${good}?action=hangup`, `${good}%2F..`, `${good}#`]) {
      expect(await failure(api().hangUp(uuid))).toMatchObject({ status: 0, code: undefined });
      expect(await failure(api().transfer(uuid, transferNcco("+15550003333")))).toMatchObject({ status: 0 });
    }
    for (const [to, from] of [["15550002222x", "+15550001111"], ["+15550002222", "sip:alice@example.com"], ["+0123", "+15550001111"]] as const) {
      expect(await failure(api().createCall(callRequest({ to, from })))).toMatchObject({ status: 0 });
    }
    expect(await failure(api({ applicationId: "" }).createCall(callRequest()))).toMatchObject({ status: 0 });
    expect(standIn.requests.length).toBe(before);
  });
});

describe("VonageApi on the wire", () => {
  it("sends a fresh RS256 token of this application with each request, JSON bodies", async () => {
    const server = await loopbackServer((req, res) => {
      if (req.method === "POST") {
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ uuid: "63f61863-4a51-4f6b-86e1-46edebcf9356", status: "started" }));
      } else res.writeHead(204).end();
    });
    try {
      const client = api({ apiUrl: server.url + "/" });
      await client.createCall(callRequest());
      await client.hangUp("63f61863-4a51-4f6b-86e1-46edebcf9356");
      const [create, hangUp] = server.seen as [Seen, Seen];
      expect([create.method, create.url, hangUp.method, hangUp.url]).toEqual(["POST", "/v1/calls", "PUT", "/v1/calls/63f61863-4a51-4f6b-86e1-46edebcf9356"]);
      expect(create.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(hangUp.body)).toEqual({ action: "hangup" });
      const tokens = [create, hangUp].map((s) => /^Bearer (\S+)$/.exec(s.headers.authorization ?? "")![1]!);
      expect(tokens[0]).not.toBe(tokens[1]);
      for (const token of tokens) {
        expect(verifySignature(token, keys.publicKeyPem)).toBe(true);
        const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
        expect(claims).toMatchObject({ application_id: APPLICATION_ID });
        expect(JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString("utf8")).alg).toBe("RS256");
      }
    } finally {
      await server.close();
    }
  });

  it("never puts its token into an error, even when the answer echoes it", async () => {
    const server = await loopbackServer((req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: `https://x.example/errors#${req.headers.authorization}`, title: "Bad Request", detail: `you sent ${req.headers.authorization}` }));
    });
    try {
      const err = await failure(api({ apiUrl: server.url }).hangUp("63f61863-4a51-4f6b-86e1-46edebcf9356"));
      const token = /^Bearer (\S+)$/.exec(server.seen[0]!.headers.authorization ?? "")![1]!;
      expect(err.status).toBe(400);
      expect(JSON.stringify([err.message, err.moreInfo, err.code, err.stack])).not.toContain(token);
    } finally {
      await server.close();
    }
  });

  it("refuses an API URL that is neither https nor loopback http before sending anything", async () => {
    let fetched = 0;
    const fetchSpy = (async () => {
      fetched++;
      return new Response("{}");
    }) as typeof fetch;
    expect(await failure(api({ apiUrl: "http://api.nexmo.com", fetch: fetchSpy }).createCall(callRequest()))).toMatchObject({ status: 0 });
    expect(fetched).toBe(0);
  });

  it("gives up on an API that never answers (status 0)", async () => {
    const server = await loopbackServer(() => {});
    try {
      expect(await failure(api({ apiUrl: server.url, timeoutMs: 200 }).createCall(callRequest()))).toMatchObject({ status: 0, message: "Vonage did not answer within 200 ms" });
    } finally {
      await server.close();
    }
  });

  it("refuses an answer without a call UUID", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ uuid: "../../x", status: "started" }));
    });
    try {
      expect(await failure(api({ apiUrl: server.url }).createCall(callRequest()))).toMatchObject({ status: 0 });
    } finally {
      await server.close();
    }
  });
});

describe("NCCOs", () => {
  it("transfers to a phone endpoint (Vonage's digits) or a sip endpoint, and refuses anything else", () => {
    expect(transferNcco(" +1 (555) 000-3333 ")).toEqual([{ action: "connect", endpoint: [{ type: "phone", number: "15550003333" }] }]);
    expect(transferNcco("sip:desk@pbx.example.com")).toEqual([{ action: "connect", endpoint: [{ type: "sip", uri: "sip:desk@pbx.example.com" }] }]);
    for (const bad of ["", "  ", "desk", "+0123", "tel:+15550003333", "sip:", "sip:a b@x", "sip:a@x\r\nX: y", "sip:" + "a".repeat(600), "+1555000333312345678"]) {
      expect(() => transferNcco(bad), bad).toThrow(RangeError);
    }
  });
});
