import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CarrierApiError } from "../../../src/telephony/carriers/carrier-http.js";
import { TwilioApi, type CreateCallRequest } from "../../../src/telephony/carriers/twilio/twilio-api.js";
import { dialTwiml } from "../../../src/telephony/carriers/twilio/twiml.js";
import { TwilioStandIn } from "../../helpers/twilio-standin.js";
import { readDial } from "../../helpers/twiml-read.js";

// TwilioApi against the Twilio stand-in (Twilio's REST wire protocol on 127.0.0.1), and against
// small loopback servers for what the stand-in does not do: stall, redirect, answer garbage.

const ACCOUNT_SID = "AC" + "0123456789abcdef".repeat(2);
const AUTH_TOKEN = "auth-token-5ec4e7-do-not-print";
const OWNED = "+15550001111";
const CALLEE = "+15550002222";
const STREAM_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://parley.example/media/twilio"/></Connect></Response>';

const standIn = new TwilioStandIn({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN });
const api = (options: Partial<ConstructorParameters<typeof TwilioApi>[0]> = {}) =>
  new TwilioApi({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiUrl: standIn.url, timeoutMs: 5000, ...options });

const callRequest = (extra: Partial<CreateCallRequest> = {}): CreateCallRequest => ({
  to: CALLEE,
  from: OWNED,
  twiml: STREAM_TWIML,
  statusCallback: "https://parley.example/carriers/twilio/status?call_id=call_1",
  statusCallbackEvents: ["initiated", "ringing", "answered", "completed"],
  ...extra,
});

/** The CarrierApiError a promise rejects with (fails the test when it resolves or throws anything else). */
async function failure(promise: Promise<unknown>): Promise<CarrierApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CarrierApiError);
  const error = err as CarrierApiError;
  // Whatever went wrong, the auth token is nowhere in what the error says.
  expect(JSON.stringify([error.message, error.moreInfo, error.stack, { ...error }])).not.toContain(AUTH_TOKEN);
  return error;
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A loopback server that records each request and answers with `handler` (which may never answer). */
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

describe("TwilioApi against the Twilio stand-in", () => {
  it("creates a call with Twilio's field names, StatusCallbackEvent repeated", async () => {
    standIn.addNumber(OWNED);
    const created = await api().createCall(callRequest({ machineDetection: "Enable", timeoutSeconds: 30 }));
    const call = standIn.call(created.sid);
    expect(created).toEqual({ sid: call.sid, status: "queued" });
    expect(standIn.requests.at(-1)).toMatchObject({ method: "POST", path: `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`, status: 201 });
    expect(call.params).toEqual({
      To: CALLEE,
      From: OWNED,
      Twiml: STREAM_TWIML,
      StatusCallback: "https://parley.example/carriers/twilio/status?call_id=call_1",
      StatusCallbackMethod: "POST",
      StatusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
      MachineDetection: "Enable",
      Timeout: "30",
    });
    expect(call.statusCallbackEvents).toEqual(["initiated", "ringing", "answered", "completed"]);
    expect(call.twiml).toBe(STREAM_TWIML);
  });

  it("leaves out MachineDetection and Timeout when not asked for", async () => {
    const { sid } = await api().createCall(callRequest({ statusCallbackEvents: ["completed"] }));
    expect(Object.keys(standIn.call(sid).params).sort()).toEqual(["From", "StatusCallback", "StatusCallbackEvent", "StatusCallbackMethod", "To", "Twiml"]);
    expect(standIn.call(sid).params.StatusCallbackEvent).toBe("completed");
  });

  it("redirects a live call to a <Dial> and hangs up another", async () => {
    // No status callback URLs where the stand-in would send one: it only ever reaches loopback.
    const { sid } = await api().createCall(callRequest({ statusCallback: "" }));
    const redirected = await api().updateCall(sid, { twiml: dialTwiml("+15550003333") });
    expect(redirected.sid).toBe(sid);
    expect(standIn.requests.at(-1)).toMatchObject({ method: "POST", path: `/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/${sid}.json`, status: 200 });
    expect(standIn.call(sid).dialed).toBe("+15550003333");
    expect(readDial(standIn.call(sid).twiml!)).toBe("+15550003333");

    const other = await api().createCall(callRequest({ statusCallback: "" }));
    const ended = await api().updateCall(other.sid, { status: "completed" });
    expect(ended).toEqual({ sid: other.sid, status: "completed" });
    expect(standIn.call(other.sid).updates).toEqual([{ Status: "completed" }]);
    const canceled = await api().createCall(callRequest({ statusCallback: "" }));
    expect(await api().updateCall(canceled.sid, { status: "canceled" })).toEqual({ sid: canceled.sid, status: "canceled" });
  });

  it("finds one of the account's numbers by its exact E.164 and sets its voice URL", async () => {
    standIn.addNumber("+155500099990"); // matched by Twilio's pattern filter too (listed first), not the one asked for
    const number = standIn.addNumber("+15550009999", "https://old.example/voice");
    const found = await api().findIncomingNumber("+15550009999");
    expect(found).toEqual({ sid: number.sid, phoneNumber: "+15550009999", voiceUrl: "https://old.example/voice" });
    expect(standIn.requests.at(-1)).toMatchObject({ method: "GET", path: `/2010-04-01/Accounts/${ACCOUNT_SID}/IncomingPhoneNumbers.json`, query: "?PhoneNumber=%2B15550009999" });
    expect(await api().findIncomingNumber("+15550008888")).toBeUndefined();

    const updated = await api().setVoiceUrl(number.sid, "https://parley.example/carriers/twilio/voice");
    expect(updated).toEqual({ sid: number.sid, phoneNumber: "+15550009999", voiceUrl: "https://parley.example/carriers/twilio/voice" });
    expect(standIn.requests.at(-1)).toMatchObject({ method: "POST", path: `/2010-04-01/Accounts/${ACCOUNT_SID}/IncomingPhoneNumbers/${number.sid}.json` });
    expect(number.updates).toEqual([{ VoiceUrl: "https://parley.example/carriers/twilio/voice", VoiceMethod: "POST" }]);
    expect(number.voiceMethod).toBe("POST");
  });

  it("maps Twilio's error bodies: 401 is code 20003, an unknown call 404 code 20404, a refused call 400", async () => {
    const unauthorized = await failure(api({ authToken: "not-the-token" }).createCall(callRequest()));
    expect(unauthorized).toMatchObject({ status: 401, code: 20003, message: "Authenticate", moreInfo: "https://www.twilio.com/docs/errors/20003" });
    expect(unauthorized.message).not.toContain("not-the-token");

    const unknown = await failure(api().updateCall("CA" + "f".repeat(32), { status: "completed" }));
    expect(unknown).toMatchObject({ status: 404, code: 20404 });

    const notOwned = await failure(api().createCall(callRequest({ from: "+15550004444" })));
    expect(notOwned).toMatchObject({ status: 400, code: 21210 });
    expect(notOwned.message).toContain("not yet verified");

    standIn.failNext(1, 503);
    expect(await failure(api().findIncomingNumber(OWNED))).toMatchObject({ status: 503, code: 20503, message: "Service Unavailable" });
  });

  it("refuses a malformed call or number SID without sending anything", async () => {
    const before = standIn.requests.length;
    const good = "0123456789abcdef".repeat(2);
    for (const sid of [
      "",
      "CA" + good.slice(1),
      "CA" + good + "0",
      "CA" + good + "\n",
      "PN" + good,
      "CA" + good.slice(0, 31) + "g",
      `../../IncomingPhoneNumbers/PN${good}`,
      `CA${good}/../../../../Accounts/AC${good}/Calls`,
      `CA${good}?Status=completed`,
      `CA${good}%2F..`,
    ]) {
      expect(await failure(api().updateCall(sid, { status: "completed" }))).toMatchObject({ status: 0, code: undefined });
    }
    for (const sid of ["CA" + good, "PN" + good + "/..", "PN", `PN${good}#`]) {
      expect(await failure(api().setVoiceUrl(sid, "https://parley.example/carriers/twilio/voice"))).toMatchObject({ status: 0 });
    }
    // Neither can an update carry another status, or nothing at all.
    expect(await failure(api().updateCall("CA" + good, { status: "in-progress" as "completed" }))).toMatchObject({ status: 0 });
    expect(await failure(api().updateCall("CA" + good, {}))).toMatchObject({ status: 0 });
    expect(standIn.requests.length).toBe(before);
  });
});

describe("TwilioApi on the wire", () => {
  it("sends basic auth (sid:token) and a form-encoded body with each event its own StatusCallbackEvent", async () => {
    const server = await loopbackServer((_req, res) => {
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ sid: "CA" + "a".repeat(32), status: "queued" }));
    });
    try {
      await api({ apiUrl: server.url + "/" }).createCall(callRequest({ twiml: "<Response/>", statusCallback: "https://p.example/s?a=1&b=2" }));
      const [seen] = server.seen;
      expect(seen!.method).toBe("POST");
      expect(seen!.url).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`);
      expect(seen!.headers.authorization).toBe("Basic " + Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString("base64"));
      expect(seen!.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      expect(seen!.body).toBe(
        "To=%2B15550002222&From=%2B15550001111&Twiml=%3CResponse%2F%3E&StatusCallback=https%3A%2F%2Fp.example%2Fs%3Fa%3D1%26b%3D2&StatusCallbackMethod=POST" +
          "&StatusCallbackEvent=initiated&StatusCallbackEvent=ringing&StatusCallbackEvent=answered&StatusCallbackEvent=completed",
      );
    } finally {
      await server.close();
    }
  });

  it("gives up on a server that never answers, or stalls in its body, with status 0", async () => {
    const silent = await loopbackServer(() => {});
    const stalling = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"incoming_phone_numbers": [');
    });
    try {
      expect(await failure(api({ apiUrl: silent.url, timeoutMs: 200 }).createCall(callRequest()))).toMatchObject({ status: 0, message: "Twilio did not answer within 200 ms" });
      expect(await failure(api({ apiUrl: stalling.url, timeoutMs: 200 }).findIncomingNumber(OWNED))).toMatchObject({ status: 0, message: "Twilio did not answer within 200 ms" });
      expect(silent.seen).toHaveLength(1);
    } finally {
      await silent.close();
      await stalling.close();
    }
  }, 10_000);

  it("reports a refused connection as status 0", async () => {
    const gone = await loopbackServer(() => {});
    await gone.close();
    const error = await failure(api({ apiUrl: gone.url }).findIncomingNumber(OWNED));
    expect(error).toMatchObject({ status: 0, code: undefined });
    expect(error.message).toMatch(/^Twilio could not be reached: /);
  });

  it("does not follow a redirect, so the credentials never go to another origin", async () => {
    const elsewhere = await loopbackServer((_req, res) => res.end("{}"));
    const redirecting = await loopbackServer((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json` });
      res.end();
    });
    try {
      expect(await failure(api({ apiUrl: redirecting.url }).createCall(callRequest()))).toMatchObject({ status: 0 });
      expect(redirecting.seen).toHaveLength(1);
      expect(elsewhere.seen).toHaveLength(0);
    } finally {
      await elsewhere.close();
      await redirecting.close();
    }
  });

  it("never repeats the auth token, even from an error body that echoes it, and cuts long messages", async () => {
    const server = await loopbackServer((req, res) => {
      res.writeHead(req.url!.includes("long") ? 500 : 400, { "content-type": "application/json" });
      const echo = `bad credentials ${ACCOUNT_SID}:${AUTH_TOKEN} ` + (req.url!.includes("long") ? "x".repeat(5000) : "");
      res.end(JSON.stringify({ code: 20001, message: echo, more_info: `https://www.twilio.com/docs/errors/20001?t=${AUTH_TOKEN}`, status: 400 }));
    });
    try {
      const error = await failure(api({ apiUrl: server.url }).findIncomingNumber(OWNED));
      expect(error).toMatchObject({ status: 400, code: 20001, message: `bad credentials ${ACCOUNT_SID}:[redacted] ` });
      const long = await failure(api({ apiUrl: server.url + "/long" }).findIncomingNumber(OWNED));
      expect(long.message.length).toBe(500);
    } finally {
      await server.close();
    }
  });

  it("maps answers that are not Twilio's: a non-JSON error, a 2xx without JSON, an oversized body", async () => {
    const server = await loopbackServer((req, res) => {
      if (req.url!.startsWith("/html")) {
        res.writeHead(502, { "content-type": "text/html" });
        res.end("<html>Bad Gateway</html>");
      } else if (req.url!.startsWith("/text")) {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("ok");
      } else if (req.url!.startsWith("/huge")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ incoming_phone_numbers: [], padding: "x".repeat(2 << 20) }));
      } else {
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ sid: "not-a-call-sid", status: "queued" }));
      }
    });
    try {
      expect(await failure(api({ apiUrl: server.url + "/html" }).createCall(callRequest()))).toMatchObject({ status: 502, code: undefined, message: "Twilio answered HTTP 502" });
      expect(await failure(api({ apiUrl: server.url + "/text" }).createCall(callRequest()))).toMatchObject({ status: 200, code: undefined });
      expect(await failure(api({ apiUrl: server.url + "/huge" }).findIncomingNumber(OWNED))).toMatchObject({ status: 200 });
      expect(await failure(api({ apiUrl: server.url + "/odd" }).createCall(callRequest()))).toMatchObject({ status: 0 });
    } finally {
      await server.close();
    }
  });

  it("sends nothing without credentials, with a malformed account SID, or over plain HTTP past loopback", async () => {
    const sent: string[] = [];
    const spy: typeof fetch = (input) => {
      sent.push(String(input));
      return Promise.reject(new Error("must not be called"));
    };
    const cases = [
      { authToken: "" },
      { accountSid: "" },
      { accountSid: "AC123" },
      { accountSid: `${ACCOUNT_SID}/../AC${"1".repeat(32)}` },
      { apiUrl: "http://api.twilio.example" },
      { apiUrl: "http://10.0.0.1:8080" },
      { apiUrl: "ftp://127.0.0.1" },
      { apiUrl: "not a url" },
    ];
    for (const options of cases) {
      const error = await failure(api({ ...options, fetch: spy }).createCall(callRequest()));
      expect(error.status).toBe(0);
    }
    expect(sent).toEqual([]);
  });
});
