import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSipService } from "../helpers/sip-service.js";
import { rawSipPeer, requestText, type RawSipPeer } from "../helpers/sip-raw-peer.js";
import type { TestAccount, TestApp } from "../helpers/test-app.js";
import { twilioStart } from "../helpers/twilio-stream.js";
import { until } from "../helpers/until.js";
import { upgrade, type UpgradeOutcome } from "../helpers/ws-upgrade.js";

// Admission control: a box that carries one call (PARLEY_CALL_CAPACITY=1) refuses a second
// before it starts, on every way a call comes in, and keeps outbound and campaign calls queued
// until the slot frees. The held call is a silent WebSocket caller: nothing here is recognized.
const NUMBER = "+14155550161";
/** The simulator answers +15005551xxx and hangs up at once. */
const ANSWERS = (i: number) => `+15005551${String(i).padStart(3, "0")}`;

let app: TestApp;
let acct: TestAccount;
let sipPort: number;
let agentId: string;
let peer: RawSipPeer;
let wsBase: string;

beforeAll(async () => {
  ({ app, sipPort } = await startSipService("35000-35099", { PARLEY_CALL_CAPACITY: "1", PARLEY_CAMPAIGN_POLL_MS: "50" }));
  wsBase = app.baseUrl.replace(/^http/, "ws");
  acct = await app.account({ credits: 1000 });
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello." } });
  agentId = agent.body.id;
  await app.activeNumber(acct.key, { phone_number: NUMBER, country: "US", default_agent_id: agentId });
  peer = await rawSipPeer();
}, 60_000);

afterAll(async () => {
  await peer?.close();
  await app?.close();
});

const nativeCall = (): Promise<UpgradeOutcome> => upgrade(`${wsBase}/media/ws?agent_id=${agentId}&format=pcm16&sample_rate=16000`, { Authorization: `Bearer ${acct.key}` });

/** The final response to an INVITE for NUMBER sent from the raw peer. */
async function invite(): Promise<{ status: number; retryAfter: string | undefined }> {
  const branch = "z9hG4bK" + randomBytes(6).toString("hex");
  peer.send(requestText(peer.port, branch, { user: NUMBER }), sipPort);
  let final: { status: number; retryAfter: string | undefined } | undefined;
  await until("a final response to the INVITE", () => {
    const response = peer.to(branch).find((r) => r.status >= 200);
    if (response) final = { status: response.status, retryAfter: response.headers.get("Retry-After") };
    return final !== undefined;
  });
  return final!;
}

const callStatus = async (id: string): Promise<string> => (await app.request("GET", `/v1/calls/${id}`, { key: acct.key })).body.status;

describe("a box at its call capacity", () => {
  it("refuses a new call on every transport before it starts, keeps outbound and campaign calls queued, and takes them once the slot frees", async () => {
    const held = await nativeCall();
    expect(held.status).toBe(101);
    const gateway = app.parley.media!.gateway;
    await until("the held call's slot", () => gateway.slotsHeld === 1);
    const ready = await app.request("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready", calls: { capacity: 1, in_use: 1, available: 0 } });
    const callsBefore = (await app.parley.services.db.selectFrom("calls").select("id").execute()).length;

    // Native WebSocket (an API key): 503 before the upgrade, told when to try again.
    const native = await nativeCall();
    expect(native.status).toBe(503);
    expect(native.body.error).toMatchObject({ code: "engine_at_capacity", message: expect.stringContaining("PARLEY_CALL_CAPACITY") });
    expect(native.headers?.["retry-after"]).toBe("30");

    // A browser with a web call token: the same refusal, and the single-use token is not used up by it.
    const web = await app.request("POST", "/v1/calls/web", { key: acct.key, body: { agent_id: agentId } });
    expect(web.status).toBe(201);
    const browserUrl = `${wsBase}/media/ws?token=${web.body.token}&format=pcm16&sample_rate=16000`;
    const browser = await upgrade(browserUrl);
    expect(browser.status).toBe(503);
    expect(browser.body.error.code).toBe("engine_at_capacity");

    // A Twilio stream: closed 1013 (try again later) with the reason.
    const rotated = await app.request("POST", "/v1/account/media-token/rotate", { key: acct.key });
    expect(await (await twilioStart(wsBase, { customParameters: { token: rotated.body.media_token, agent_id: agentId } })).closed).toEqual({ code: 1013, reason: expect.stringContaining("call slots are in use (PARLEY_CALL_CAPACITY)") });

    // SIP: 503 Service Unavailable with Retry-After.
    expect(await invite()).toEqual({ status: 503, retryAfter: "30" });

    // None of them left a call behind.
    expect((await app.parley.services.db.selectFrom("calls").select("id").execute()).length).toBe(callsBefore);

    // An outbound call and a campaign's call wait, queued, while the box is full.
    const outbound = await app.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: ANSWERS(1), agent_id: agentId } });
    expect(outbound.status).toBe(200);
    const campaign = await app.request("POST", "/v1/campaigns", {
      key: acct.key,
      body: { name: "Waits", agent_id: agentId, contacts: [{ phone: ANSWERS(2) }], settings: { calling_hours: { start: "00:00", end: "24:00" } } },
    });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await callStatus(outbound.body.id)).toBe("queued");
    const campaignCalls = await app.parley.services.db.selectFrom("calls").select("status").where("campaign_id", "=", campaign.body.id).execute();
    expect(campaignCalls.map((c) => c.status)).toEqual(["queued"]);
    expect(gateway.slotsHeld).toBe(1);

    // The held call ends: the outbound call, then the campaign's, are placed in turn.
    held.socket!.send(JSON.stringify({ type: "hangup" }));
    await until("the outbound call to end", async () => (await callStatus(outbound.body.id)) === "completed", 30_000);
    await until("the campaign to finish", async () => (await app.request("GET", `/v1/campaigns/${campaign.body.id}`, { key: acct.key })).body.status === "completed", 30_000);
    await until("every slot back", () => gateway.slotsHeld === 0);

    // The browser's token still works now that there is room.
    const retried = await upgrade(browserUrl);
    expect(retried.status).toBe(101);
    expect(retried.messages[0] ?? (await new Promise((resolve) => retried.socket!.once("message", (data) => resolve(JSON.parse(data.toString())))))).toMatchObject({
      type: "connected",
      call_id: web.body.call_id,
    });
    retried.socket!.send(JSON.stringify({ type: "hangup" }));
    await until("the browser call to end", async () => (await callStatus(web.body.call_id)) === "completed");
  }, 90_000);
});
