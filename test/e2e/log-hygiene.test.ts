import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startServer } from "../../scripts/parley-process.js";
import { cliAccount } from "../helpers/cli-account.js";
import { NativeMediaClient, TwilioMediaClient } from "../helpers/media-client.js";
import { startWebhookReceiver, verifyParleySignature, type WebhookReceiver } from "../helpers/webhook-receiver.js";

// The logs of a service process through a full working session: an outbound simulator call
// (numbers, a transcript, a recording, webhooks signed with a secret), an inbound Twilio-protocol
// call (a media token, a caller's number), a browser call (a web call token), and API requests
// with the key. Every line must be JSON, requests and call events must carry their ids, and
// no credential, full phone number or word of the calls may be in any line. The calls'
// audio runs inside the service; nothing here depends on how it is timed or recognised.

const CALLEE = "+14155550123";
const OWNED = "+16505551234";
const CALLER = "+13125550199";
const GREETING = "Hello, this is Quillon from Marzipan Dental.";
/** A provider credential of no recognisable shape, set but unused (the rules dialogue needs none): removed by value. */
const LLM_KEY = "llm-provider-key-9f8e7d6c5b";

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** Every spelling of a number a log line might carry: E.164, digits only, national. */
function spellings(e164: string): string[] {
  const digits = e164.slice(1);
  return [e164, digits, digits.slice(1), `${digits.slice(1, 4)}-${digits.slice(4, 7)}-${digits.slice(7)}`];
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("the service's logs through a full test call", () => {
  it("are JSON lines with request and call ids, and hold no credential, full phone number or transcript word", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    const env = {
      PARLEY_DATA_DIR: dataDir,
      PARLEY_LOG_LEVEL: "debug",
      PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1",
      PARLEY_WEBHOOK_VERIFY_URL: "0",
      PARLEY_LLM_API_KEY: LLM_KEY,
    };
    const acct = await cliAccount(env, { credits: 100 });
    const receiver: WebhookReceiver = await startWebhookReceiver();
    const server = await startServer(env);
    const api = (method: string, urlPath: string, body?: unknown) => acct.api(server.baseUrl, method, urlPath, body);
    let stopped = false;
    try {
      const agent = await api("POST", "/v1/agents", { name: "Quillon", system_prompt: "You call patients of Marzipan Dental.", voice_id: "flite-kal", first_message: GREETING, metadata: { business_name: "Marzipan Dental" } });
      expect(agent.status).toBe(201);
      // The account claims its number; the operator approves it.
      expect((await api("POST", "/v1/phone-numbers", { phone_number: OWNED, country: "US" })).status).toBe(201);
      expect((await runCli(["admin", "number", "approve", OWNED, "--account", acct.id], env)).code).toBe(0);
      const webhook = await api("POST", "/v1/webhooks", { url: receiver.url, events: ["*"] });
      expect(webhook.status).toBe(201);
      const webhookSecret = webhook.body.secret as string;
      const signingSecret = (await api("GET", "/v1/account")).body.signing_secret as string;
      const mediaToken = (await api("POST", "/v1/account/media-token/rotate")).body.media_token as string;
      expect(mediaToken).toMatch(/^mt_/);

      // The outbound call, placed with a request whose id the logs must show.
      const place = await fetch(`${server.baseUrl}/v1/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${acct.key}`, "content-type": "application/json" },
        body: JSON.stringify({ phone_number: CALLEE, from_number: OWNED, agent_id: agent.body.id }),
      });
      const placed = (await place.json()) as { id: string };
      expect(place.status, JSON.stringify(placed)).toBe(200);
      const placeRequestId = place.headers.get("x-request-id")!;
      const outboundId = placed.id;

      // Meanwhile, an inbound call over the Twilio protocol with the media token and a caller's number...
      const twilio = await TwilioMediaClient.connect(server.baseUrl.replace("http", "ws") + "/media/twilio", { token: mediaToken, To: OWNED, From: CALLER, agent_id: agent.body.id });
      await until("the inbound call's greeting", () => (twilio.audio.length > 0 ? true : undefined), 30_000);
      twilio.hangUp();
      twilio.close();
      // ...and a browser call with a web call token.
      const web = await api("POST", "/v1/calls/web", { agent_id: agent.body.id });
      expect(web.status).toBe(201);
      const webToken = web.body.token as string;
      expect(webToken).toMatch(/^wct_/);
      const browser = await NativeMediaClient.connect(`${server.baseUrl.replace("http", "ws")}/media/ws?token=${webToken}&format=pcm16&sample_rate=16000`, "");
      await browser.waitFor((m) => m.type === "connected");
      browser.hangUp();

      // The outbound call's events reach the webhook, signed with its secret.
      const events = await until("the outbound call's last events at the receiver", () => {
        const got = receiver.received.filter((r) => r.body?.data?.call_id === outboundId);
        return got.some((r) => r.event === "call.recording.ready") && got.some((r) => r.event === "call.completed") ? got : undefined;
      });
      for (const delivery of events) expect(verifyParleySignature(delivery.headers["x-parley-signature"] as string, delivery.rawBody, webhookSecret)).toBe(true);
      const recordingUrl = new URL(events.find((r) => r.event === "call.recording.ready")!.body.data.recording_url as string);
      expect((await fetch(server.baseUrl + recordingUrl.pathname + recordingUrl.search)).status).toBe(200);
      const outbound = (await api("GET", `/v1/calls/${outboundId}?include=transcript`)).body;
      expect(outbound.status).toBe("completed");
      const spoken = (outbound.transcript as Array<{ role: string; content: string }>).filter((s) => s.content.trim() !== "");
      expect(spoken.some((s) => s.role === "user")).toBe(true);

      // A careless client puts a number and credentials in paths no route knows: logged, masked.
      for (const secret of [CALLEE.slice(1), acct.key, webToken, mediaToken, webhookSecret]) expect((await api("GET", `/v1/lookup/${secret}`)).status).toBe(404);
      const calls = await until("the three calls to end", async () => {
        const list = (await api("GET", "/v1/calls?limit=10")).body.data as Array<{ id: string; status: string; direction: string }>;
        return list.length === 3 && list.every((c) => !["queued", "ringing", "in_progress"].includes(c.status)) ? list : undefined;
      });
      expect(await server.stop("SIGTERM")).toBe(0);
      stopped = true;

      // Every stdout line is one JSON object; stderr holds only the start-up banner.
      const stdout = server.stdout();
      const lines: LogLine[] = stdout
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => {
          expect(() => JSON.parse(l), l).not.toThrow();
          return JSON.parse(l) as LogLine;
        });
      for (const line of lines) expect(line, JSON.stringify(line)).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
      expect(server.stderr()).toContain("Parley is listening on");

      // Nothing secret or personal anywhere, in any line of either stream.
      const everything = stdout + server.stderr();
      const forbidden: Array<[string, string]> = [
        ["API key", acct.key],
        ["API key's secret part", acct.key.slice("sk_parley_".length)],
        ["webhook secret", webhookSecret],
        ["webhook secret's random part", webhookSecret.slice("whsec_".length)],
        ["signing secret", signingSecret],
        ["media token", mediaToken],
        ["media token's random part", mediaToken.slice("mt_".length)],
        ["web call token", webToken],
        ["web call token's random part", webToken.slice("wct_".length)],
        ["recording link signature", recordingUrl.searchParams.get("signature")!],
        ["provider API key", LLM_KEY],
        ...[CALLEE, OWNED, CALLER].flatMap((n) => spellings(n).map((s): [string, string] => [`phone number ${n}`, s])),
        ["greeting", GREETING],
        ["greeting's words", "Quillon"],
        ["greeting's words", "Marzipan"],
        ...spoken.map((s): [string, string] => [`${s.role}'s words`, s.content]),
      ];
      for (const [what, value] of forbidden) {
        const at = everything.indexOf(value);
        expect(at, `${what} (${value}) in the logs: ${everything.slice(Math.max(0, at - 200), at + 200)}`).toBe(-1);
      }
      // The caller's words one by one (those of 6 letters or more: shorter ones are common English).
      const words = new Set(spoken.filter((s) => s.role === "user").flatMap((s) => s.content.toLowerCase().match(/[a-z]{6,}/g) ?? []));
      const lower = everything.toLowerCase();
      for (const word of words) expect(lower.includes(word), `the caller's word "${word}" in the logs`).toBe(false);

      // Requests: one line each, with the request id the client got and the account.
      const requests = lines.filter((l) => l.msg === "request");
      expect(requests.find((l) => l.request_id === placeRequestId)).toMatchObject({ account_id: acct.id, method: "POST", route: "/v1/calls", status: 200, duration_ms: expect.any(Number) });
      for (const line of requests) expect(line.request_id).toMatch(/^req_/);
      expect(requests.filter((l) => l.route === "/v1/calls/:call_id" && l.method === "GET").every((l) => l.account_id === acct.id)).toBe(true);
      expect(requests.filter((l) => l.status === 404).map((l) => l.path)).toEqual(["/v1/lookup/1415****123", "/v1/lookup/sk_parley_[redacted]", "/v1/lookup/wct_[redacted]", "/v1/lookup/mt_[redacted]", "/v1/lookup/whsec_[redacted]"]);
      for (const line of requests.filter((l) => l.status === 404)) expect(line.route).toBeNull();

      // Call events: each with its call and account; the lifecycle, the turns and the end of each call.
      const callEvents = lines.filter((l) => l.msg === "call event");
      for (const line of callEvents) expect(line, JSON.stringify(line)).toMatchObject({ call_id: expect.stringMatching(/^call_/), account_id: acct.id, event: expect.stringMatching(/^call\./) });
      const eventsOf = (callId: string) => callEvents.filter((l) => l.call_id === callId).map((l) => l.event);
      expect(eventsOf(outboundId)).toEqual(expect.arrayContaining(["call.started", "call.ringing", "call.answered", "call.turn", "call.ended", "call.completed", "call.transcript.ready", "call.recording.ready"]));
      for (const call of calls) expect(eventsOf(call.id)).toEqual(expect.arrayContaining(["call.started", "call.answered", "call.ended"]));
      expect(callEvents.find((l) => l.call_id === outboundId && l.event === "call.started")).toMatchObject({ phone_number: "+1415****123", from_number: "+1650****234", direction: "outbound" });
      const inbound = calls.find((c) => c.direction === "inbound")!;
      expect(callEvents.find((l) => l.call_id === inbound.id && l.event === "call.started")).toMatchObject({ phone_number: "+1650****234", from_number: "+1312****199" });
      // Webhook deliveries, one line per attempt.
      expect(lines.filter((l) => l.msg === "webhook delivered" && l.account_id === acct.id).length).toBeGreaterThanOrEqual(events.length);

    } finally {
      if (!stopped) await server.stop("SIGKILL");
      await receiver.close();
    }
  }, 180_000);
});
