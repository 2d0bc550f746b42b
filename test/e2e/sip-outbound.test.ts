import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import type { IncomingCall } from "../../engine/transports/sip/incoming-call.js";
import { SipUserAgent } from "../../engine/transports/sip/sip-user-agent.js";
import { sendLikeAPhone } from "../helpers/phone-line.js";
import { freeUdpPort, startSipp, type Sipp } from "../helpers/sipp.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// POST /v1/calls through a SIP trunk (PARLEY_CARRIER=sip): sipp on loopback is the trunk and the callee.

const HOST = "127.0.0.1";
const SCENARIOS = fileURLToPath(new URL("./sipp/", import.meta.url));
const GREETING = "Hello, this is Ava from Acme Dental.";
const ENDED = ["completed", "transferred", "failed", "no_answer", "busy"];

let app: TestApp;
let acct: TestAccount & { agentId?: string };
let trunkPort: number;

/** The service's settings for calls through sipp as the trunk on `trunkPort`. */
async function trunkSettings(trunkPort: number, ringTimeoutMs: number): Promise<Record<string, string>> {
  return {
    PARLEY_ENGINE: "1",
    PARLEY_SIP_PORT: String(await freeUdpPort(HOST)),
    PARLEY_SIP_HOST: HOST,
    PARLEY_SIP_ALLOW: "127.0.0.1",
    PARLEY_RTP_PORTS: "31000-31999",
    PARLEY_CARRIER: "sip",
    PARLEY_SIP_TRUNK: `${HOST}:${trunkPort}`,
    // Answered only to a trunk that challenges (uas-auth.xml).
    PARLEY_SIP_TRUNK_USER: "parley",
    PARLEY_SIP_TRUNK_PASSWORD: "trunk-secret",
    PARLEY_SIP_TRUNK_REALM: "parley.test",
    PARLEY_SIP_RING_TIMEOUT_MS: String(ringTimeoutMs),
  };
}

beforeAll(async () => {
  trunkPort = await freeUdpPort(HOST);
  app = await startTestApp({}, await trunkSettings(trunkPort, 2000));
  // Agency: polling the call stays well under the plan's request rate.
  acct = await app.account({ plan: "agency", credits: 100 });
  await app.parley.services.phoneNumbers.add(acct.id, { phone_number: "+16505550140", country: "US" } as never);
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Ava", system_prompt: "You call patients.", voice_id: "flite-kal", first_message: GREETING } });
  acct.agentId = agent.body.id;
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/** Places a call to `phone` while sipp plays `scenario` as the trunk; returns the ended call and sipp's exit. */
async function callThrough(args: string[], body: Record<string, unknown> = {}): Promise<{ call: any; sipp: Awaited<Sipp["exited"]> }> {
  const sipp = await startSipp([...args, "-m", "1", "-i", HOST, "-p", String(trunkPort), "-mp", String(await freeUdpPort(HOST))]);
  try {
    // sipp needs a moment to bind its port before our INVITE arrives.
    await new Promise((r) => setTimeout(r, 300));
    const created = await app.request("POST", "/v1/calls", { key: acct.key, body: { phone_number: "+14155550190", agent_id: acct.agentId, ...body } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    let call: any;
    for (let i = 0; i < 150; i++) {
      call = (await app.request("GET", `/v1/calls/${created.body.id}?include=transcript`, { key: acct.key })).body;
      if (ENDED.includes(call.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return { call, sipp: await sipp.exited };
  } finally {
    await sipp.cleanup();
  }
}

describe("outbound calls through a SIP trunk", () => {
  it("connects to sipp as the callee: the agent greets, the call is completed, charged and BYE ends sipp", async () => {
    const { call, sipp } = await callThrough(["-sn", "uas"], { max_duration: 5 });
    expect(call.status).toBe("completed");
    expect(call.duration).toBeGreaterThanOrEqual(4);
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    expect((await app.request("GET", "/v1/account", { key: acct.key })).body.credit_balance).toBe(100 - Math.ceil(call.duration / 60));
    expect(sipp.code, sipp.output).toBe(0);
  }, 60_000);

  it("authenticates to a trunk that challenges the INVITE (407, then 401) and the BYE (401): the call connects and completes", async () => {
    const { call, sipp } = await callThrough(["-sf", join(SCENARIOS, "uas-auth.xml")], { max_duration: 3 });
    expect(call.status, sipp.output).toBe("completed");
    expect(call.answered_at).not.toBeNull();
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    expect(sipp.code, sipp.output).toBe(0);
  }, 60_000);

  it("ends busy when the callee answers 486", async () => {
    const { call, sipp } = await callThrough(["-sf", join(SCENARIOS, "uas-busy.xml")]);
    expect(call.status).toBe("busy");
    expect(call.answered_at).toBeNull();
    expect(sipp.code, sipp.output).toBe(0);
  }, 60_000);

  it("cancels a call that rings too long: no_answer", async () => {
    const { call, sipp } = await callThrough(["-sf", join(SCENARIOS, "uas-ring.xml")]);
    expect(call.status, sipp.output).toBe("no_answer");
    expect(sipp.code, sipp.output).toBe(0);
  }, 60_000);
});

describe("POST /v1/calls/{id}/end while a SIP call rings", () => {
  it("settles it no_answer at once and CANCELs the INVITE, long before the ring timeout", async () => {
    const port = await freeUdpPort(HOST);
    // A minute of ringing: sipp (killed after 30 s) only exits 0 if the CANCEL comes from the hang-up.
    const patient = await startTestApp({}, await trunkSettings(port, 60_000));
    const sipp = await startSipp(["-sf", join(SCENARIOS, "uas-ring.xml"), "-m", "1", "-i", HOST, "-p", String(port), "-mp", String(await freeUdpPort(HOST))]);
    try {
      const who = await patient.account({ plan: "agency", credits: 100 });
      await patient.parley.services.phoneNumbers.add(who.id, { phone_number: "+16505550141", country: "US" } as never);
      const agent = await patient.request("POST", "/v1/agents", { key: who.key, body: { name: "Ava", system_prompt: "You call patients.", voice_id: "flite-kal" } });
      await new Promise((r) => setTimeout(r, 300));
      const created = await patient.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550191", agent_id: agent.body.id } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      let status = "queued";
      for (let i = 0; i < 100 && status !== "ringing"; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = (await patient.request("GET", `/v1/calls/${created.body.id}`, { key: who.key })).body.status;
      }
      expect(status).toBe("ringing");
      const ended = await patient.request("POST", `/v1/calls/${created.body.id}/end`, { key: who.key });
      expect(ended.body).toMatchObject({ status: "no_answer", answered_at: null });
      const exit = await sipp.exited;
      expect(exit.code, exit.output).toBe(0);
      expect((await patient.request("GET", `/v1/calls/${created.body.id}`, { key: who.key })).body.status).toBe("no_answer");
    } finally {
      await sipp.cleanup();
      await patient.close();
    }
  }, 60_000);
});

describe("another company's phone menu on an outbound SIP call", () => {
  it("is answered with the key of the agent's choice (RFC 4733), sent while the menu's line listens", async () => {
    // Our own user agent is the trunk and the callee: it answers, reads its menu out, and keeps the keys it receives.
    const digits: string[] = [];
    let menuCall: Promise<void> | undefined;
    const menu = parseWav(readFileSync(fileURLToPath(new URL("../../fixtures/audio/phone-menu.8k.wav", import.meta.url)))).samples;
    const callee = await SipUserAgent.start({
      host: HOST,
      onInvite: (incoming: IncomingCall) => {
        menuCall = incoming.answer().then(async (call) => {
          call.on("dtmf", (digit) => digits.push(digit));
          // The menu, then silence (a line keeps sending packets) until a key or 10 s.
          await sendLikeAPhone(call, menu, { thenSilenceMs: 10_000, until: () => digits.length > 0 });
          // As a menu moves on to its next prompt: the key's last packets are still coming.
          await new Promise((r) => setTimeout(r, 1000));
          await call.hangUp();
        });
      },
    });
    const settings = await trunkSettings(callee.port, 5000);
    const service = await startTestApp({}, { ...settings, PARLEY_RTP_PORTS: "32000-32999", PARLEY_SIP_TRUNK_USER: "", PARLEY_SIP_TRUNK_PASSWORD: "", PARLEY_SIP_TRUNK_REALM: "" });
    try {
      const who = await service.account({ plan: "agency", credits: 100 });
      await service.parley.services.phoneNumbers.add(who.id, { phone_number: "+16505550142", country: "US" } as never);
      // No greeting: the menu speaks first, as phone menus do.
      const agent = await service.request("POST", "/v1/agents", {
        key: who.key,
        body: { name: "Ava", system_prompt: "You call clinics to book appointments.", voice_id: "flite-kal", metadata: { phone_menu_choice: "appointments" } },
      });
      const created = await service.request("POST", "/v1/calls", { key: who.key, body: { phone_number: "+14155550192", agent_id: agent.body.id } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      let call: any;
      for (let i = 0; i < 150; i++) {
        call = (await service.request("GET", `/v1/calls/${created.body.id}?include=transcript`, { key: who.key })).body;
        if (ENDED.includes(call.status)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await menuCall;
      expect(digits, JSON.stringify(call.transcript)).toEqual(["1"]);
      expect(call.status).toBe("completed");
      // The agent said nothing over the menu.
      expect(call.transcript.filter((s: any) => s.role === "agent")).toEqual([]);
      const row = await service.parley.services.db.selectFrom("calls").select("actions").where("id", "=", call.id).executeTakeFirstOrThrow();
      expect(JSON.parse(row.actions!)).toEqual([{ type: "tool_call", name: "send_dtmf", arguments: { digits: "1" }, result: { ok: true, data: { status: "sent", digits: "1" } } }]);
    } finally {
      await service.close();
      await callee.close();
    }
  }, 60_000);
});
