import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../scripts/parley-process.js";
import { cliAccount } from "../helpers/cli-account.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, verifyParleySignature, type ReceivedWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.js";

// Webhook delivery end to end: a real simulator call's events reaching real receivers, and a
// service process killed with SIGKILL in the middle of retries.

const CALL_EVENTS = ["call.started", "call.ringing", "call.answered", "call.completed", "call.transcript.ready", "call.recording.ready"];
const GREETING = "Hello, this is Ava from Acme Dental.";

describe("a simulator call's events at the receivers", () => {
  let app: TestApp;
  const receivers: WebhookReceiver[] = [];
  beforeAll(async () => {
    app = await startTestApp({}, { PARLEY_ENGINE: "1", PARLEY_WEBHOOK_VERIFY_URL: "0" });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await app?.close();
  });

  it("delivers call.started to call.recording.ready in the documented shapes; a call's own webhook_url gets its events and the account's webhooks do not", async () => {
    const [own, accountWide] = [await startWebhookReceiver(), await startWebhookReceiver()];
    receivers.push(own, accountWide);
    const acct = await app.account({ credits: 100 });
    await app.parley.services.phoneNumbers.add(acct.id, { phone_number: "+16505551234", country: "US" } as never);
    const agent = await app.request("POST", "/v1/agents", {
      key: acct.key,
      body: { name: "Ava", system_prompt: "You call patients of Acme Dental.", voice_id: "flite-kal", first_message: GREETING, metadata: { business_name: "Acme Dental", opening_hours: "nine to five on weekdays" } },
    });
    const hook = await app.request("POST", "/v1/webhooks", { key: acct.key, body: { url: accountWide.url, events: ["*"], secret: "whsec_account_wide_0123456789abcd" } });
    expect(hook.status).toBe(201);
    const signingSecret = (await app.request("GET", "/v1/account", { key: acct.key })).body.signing_secret as string;

    const place = async (body: Record<string, unknown>) => {
      const res = await app.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: "+14155550123", agent_id: agent.body.id, ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.id as string;
    };
    const withUrl = await place({ webhook_url: own.url, metadata: { order: 7 } });
    const plain = await place({});
    const callEventsOf = (r: WebhookReceiver, callId: string) => r.received.filter((g) => g.body?.data?.call_id === callId);
    const untilAll = async (r: WebhookReceiver, callId: string) => {
      const end = Date.now() + 90_000;
      while (callEventsOf(r, callId).length < CALL_EVENTS.length) {
        if (Date.now() > end) throw new Error(`only ${callEventsOf(r, callId).map((g) => g.event)} for ${callId}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return callEventsOf(r, callId);
    };
    const [ownGot, wideGot] = await Promise.all([untilAll(own, withUrl), untilAll(accountWide, plain)]);

    // Each receiver got exactly its call's six events, nothing of the other call.
    const byName = (got: ReceivedWebhook[]) => Object.fromEntries(got.map((g) => [g.event, g]));
    expect(ownGot.map((g) => g.event).sort()).toEqual([...CALL_EVENTS].sort());
    expect(wideGot.map((g) => g.event).sort()).toEqual([...CALL_EVENTS].sort());
    expect(own.received.filter((g) => g.body?.data?.call_id !== withUrl)).toEqual([]);
    expect(callEventsOf(accountWide, withUrl)).toEqual([]);
    // Per-call deliveries are signed with the account's signing secret and name no webhook.
    for (const g of ownGot) {
      expect(verifyParleySignature(g.headers["x-parley-signature"] as string, g.rawBody, signingSecret)).toBe(true);
      expect(g.body.webhook_id).toBeNull();
    }
    for (const g of wideGot) expect(verifyParleySignature(g.headers["x-parley-signature"] as string, g.rawBody, "whsec_account_wide_0123456789abcd")).toBe(true);
    // Sequence numbers order the call's events as they happened.
    expect([...ownGot].sort((a, b) => a.body.sequence - b.body.sequence).map((g) => g.event)).toEqual(CALL_EVENTS);

    const events = byName(ownGot);
    const common = { call_id: withUrl, agent_id: agent.body.id, direction: "outbound", phone_number: "+14155550123", from_number: "+16505551234", metadata: { order: 7 } };
    expect(events["call.started"]!.body.data).toMatchObject({ ...common, status: "ringing" });
    expect(events["call.answered"]!.body.data).toMatchObject({ ...common, status: "in_progress", answered_at: expect.any(String) });
    const completed = events["call.completed"]!.body;
    expect(completed).toMatchObject({ event: "call.completed", webhook_id: null, event_id: expect.stringMatching(/^evt_/), timestamp: expect.any(String) });
    expect(completed.data).toMatchObject({ ...common, status: "completed", duration_seconds: expect.any(Number), extracted_data: {} });
    expect(completed.data).toHaveProperty("outcome");
    expect(completed.data.duration_seconds).toBeGreaterThan(0);
    expect(completed.data.transcript).toMatch(new RegExp(`^Agent: ${GREETING}\nCaller: `));
    expect(events["call.transcript.ready"]!.body.data.transcript).toBe(completed.data.transcript);
    const recordingUrl = events["call.recording.ready"]!.body.data.recording_url as string;
    expect(completed.data.recording_url).toBe(recordingUrl);
    // The link works without an API key (the test app's base URL has no port: the path is what is signed).
    const url = new URL(recordingUrl);
    const wav = await fetch(app.baseUrl + url.pathname + url.search);
    expect(wav.status).toBe(200);
    expect(wav.headers.get("content-type")).toMatch(/audio\/wav/);
    expect(Buffer.from(await wav.arrayBuffer()).subarray(0, 4).toString("latin1")).toBe("RIFF");
  }, 120_000);
});

describe("a service killed with SIGKILL in the middle of retries", () => {
  it("delivers the rest after restart, with the same delivery ids and no event lost", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    const env = {
      PARLEY_DATA_DIR: dataDir,
      PARLEY_ENGINE: "0",
      PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1",
      PARLEY_WEBHOOK_VERIFY_URL: "0",
      PARLEY_WEBHOOK_RETRY_SCHEDULE: "500ms,1s,1s,1s,1s",
      // An attempt under way at the kill comes back after the timeout and a 5 s margin.
      PARLEY_WEBHOOK_TIMEOUT_MS: "1000",
    };
    const receiver = await startWebhookReceiver();
    let healthy = false;
    receiver.answer(() => (healthy ? { status: 200 } : { status: 500 }));
    const { api } = await cliAccount(env);
    const db = new Database(path.join(dataDir, "parley.db"), { readonly: true, fileMustExist: true });
    try {
      let server = await startServer(env);
      expect((await api(server.baseUrl, "POST", "/v1/webhooks", { url: receiver.url, events: ["agent.created"] })).status).toBe(201);
      for (let i = 0; i < 3; i++) expect((await api(server.baseUrl, "POST", "/v1/agents", { name: `Agent ${i}`, system_prompt: "Be brief.", voice_id: "flite-slt" })).status).toBe(201);
      // Every delivery has failed at least once and waits for a retry: kill the process now.
      const waiting = () => db.prepare("SELECT id, status, attempt_count FROM deliveries ORDER BY id").all() as Array<{ id: string; status: string; attempt_count: number }>;
      const end = Date.now() + 20_000;
      while (!(waiting().length === 3 && waiting().every((d) => d.status === "pending" && d.attempt_count >= 1))) {
        if (Date.now() > end) throw new Error(`deliveries never all waited for a retry: ${JSON.stringify(waiting())}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // One more event, answered (so committed) just before the kill: its delivery has not been tried yet.
      expect((await api(server.baseUrl, "POST", "/v1/agents", { name: "Agent 3", system_prompt: "Be brief.", voice_id: "flite-slt" })).status).toBe(201);
      expect(await server.stop("SIGKILL")).toBeNull();
      const before = waiting();
      expect(before).toHaveLength(4);
      const failedBefore = receiver.received.length;

      healthy = true;
      server = await startServer(env);
      await receiver.waitFor(failedBefore + 4, 20_000);
      const after = receiver.received.slice(failedBefore);
      // The same delivery ids, each delivered once now; no event missing.
      expect(after.map((g) => g.delivery).sort()).toEqual(before.map((d) => d.id).sort());
      expect(after.map((g) => g.body.data.name).sort()).toEqual(["Agent 0", "Agent 1", "Agent 2", "Agent 3"]);
      const settled = Date.now() + 10_000;
      while (waiting().some((d) => d.status !== "delivered") && Date.now() < settled) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(waiting().map((d) => d.status)).toEqual(["delivered", "delivered", "delivered", "delivered"]);
      // The log goes on from the attempts made before the kill. An attempt in flight at the kill
      // was counted when it was claimed but never logged, so a number may be missing: the gap
      // records the lost attempt. Numbers never repeat or go backwards.
      const attempts = db.prepare("SELECT delivery_id, number, status_code FROM delivery_attempts ORDER BY rowid").all() as Array<{ delivery_id: string; number: number; status_code: number }>;
      for (const d of before) {
        const numbers = attempts.filter((a) => a.delivery_id === d.id).map((a) => a.number);
        expect(numbers.length).toBeGreaterThanOrEqual(1);
        expect(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!)).toBe(true);
        expect(numbers.at(-1)).toBeLessThanOrEqual(d.attempt_count + 1);
        expect(attempts.filter((a) => a.delivery_id === d.id).at(-1)!.status_code).toBe(200);
      }
      expect(await server.stop("SIGTERM")).toBe(0);
    } finally {
      db.close();
      await receiver.close();
    }
  }, 90_000);
});
