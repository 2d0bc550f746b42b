import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { encodeMulaw } from "../../engine/audio/mulaw.js";
import { parseWav } from "../../engine/audio/wav.js";
import { NativeMediaClient, TwilioMediaClient } from "../helpers/media-client.js";
import { twilioStart } from "../helpers/twilio-stream.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { upgrade, type UpgradeOutcome } from "../helpers/ws-upgrade.js";

/**
 * The media endpoints under abuse, over loopback against the real service: hang-ups during
 * call set-up, handshakes that never complete, upgrade floods, idle Twilio sockets, audio
 * faster than real time, and Twilio `start` fields that are not what Twilio sends.
 */

// Every test here waits on real sockets and a real engine.
vi.setConfig({ testTimeout: 30_000 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (every 50 ms, at most `timeoutMs`). */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The service with its media engine, and `env` settings (the media limits under test). */
function startEngineApp(env: Record<string, string> = {}): Promise<TestApp> {
  return startTestApp({}, { PARLEY_ENGINE: "1", ...env });
}

async function agentOf(app: TestApp, acct: TestAccount): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello." } });
  expect(res.status).toBe(201);
  return res.body.id;
}

const mediaTokens = new Map<string, string>();

/** The account's media token: made by the first rotation (it is shown only then), kept for the account's other streams. */
async function mediaTokenOf(app: TestApp, acct: TestAccount): Promise<string> {
  let token = mediaTokens.get(acct.id);
  if (token === undefined) {
    const rotated = await app.request("POST", "/v1/account/media-token/rotate", { key: acct.key });
    expect(rotated.status).toBe(200);
    token = rotated.body.media_token as string;
    mediaTokens.set(acct.id, token);
  }
  return token;
}

function callRows(app: TestApp, accountId: string) {
  return app.parley.services.db.selectFrom("calls").selectAll().where("account_id", "=", accountId).execute();
}

/**
 * `count` clients ask for a `/media/ws` upgrade with a valid key and are gone before the service
 * answers; then time for the service to authenticate them and try to upgrade them (a handshake
 * the service completed before it saw the client go becomes a call that ends at once).
 */
async function abandonHandshakes(app: TestApp, acct: TestAccount, agentId: string, count: number): Promise<void> {
  const port = Number(new URL(app.baseUrl).port);
  for (let i = 0; i < count; i++) {
    const socket = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const request =
      `GET /media/ws?agent_id=${agentId} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${acct.key}\r\n\r\n`;
    socket.write(request, () => socket.destroy());
  }
  await sleep(1500);
}

function closeOf(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe("media endpoints with the default limits", () => {
  let app: TestApp;
  let wsBase: string;

  beforeAll(async () => {
    app = await startEngineApp();
    wsBase = app.baseUrl.replace(/^http/, "ws");
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  describe("a hang-up during call set-up", () => {
    it("twilio: a stream stopped right after its start message ends at once: stored completed, short, billed at most a minute", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const client = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: await mediaTokenOf(app, acct), agent_id: agentId });
      // Twilio's `stop` follows `start` before the service has routed the stream, then Twilio closes.
      client.hangUp();
      client.close();
      const call = await until("the call to be stored as ended", async () => {
        const rows = await callRows(app, acct.id);
        return rows.length === 1 && rows[0]!.status !== "in_progress" ? rows[0] : undefined;
      });
      expect(call).toMatchObject({ status: "completed", duration: 0, billed_credits: 0 });
    });
  });

  describe("a /media/ws handshake that never completes", () => {
    it("leaves no call row and holds no concurrent-call slot", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      await app.parley.services.accounts.setLimits(acct.id, { concurrentCalls: 1 });
      await abandonHandshakes(app, acct, agentId, 3);
      const orphans = await callRows(app, acct.id);
      expect(orphans.filter((r) => r.status === "in_progress")).toEqual([]);
      for (const row of orphans) expect(row).toMatchObject({ status: "completed", duration: 0, billed_credits: 0 });
      // The account's one concurrent-call slot is free: a real call connects.
      const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key);
      const { call_id: callId } = await client.waitFor((m) => m.type === "connected");
      client.close();
      await client.closed;
      const rows = await until("the call to end", async () => {
        const all = await callRows(app, acct.id);
        return all.every((r) => r.status !== "in_progress") ? all : undefined;
      });
      expect(rows.find((r) => r.id === callId)?.status).toBe("completed");
    });

    it("gives back the engine slots of handshakes abandoned while the service was deciding", async () => {
      // With another account on the installation, each may hold 2 of the engine's 4 slots.
      const acct = await app.account({ credits: 100 });
      await app.account();
      const agentId = await agentOf(app, acct);
      // The clients are gone before the engine slot is taken (a slow admission, made certain here).
      const gateway = app.parley.media!.gateway;
      const admit = gateway.admit;
      gateway.admit = async (accountId) => {
        const slot = await admit.call(gateway, accountId);
        await sleep(300);
        return slot;
      };
      try {
        await abandonHandshakes(app, acct, agentId, 2);
      } finally {
        gateway.admit = admit;
      }
      const clients = [
        await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key),
        await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key),
      ];
      for (const client of clients) expect(await client.waitFor((m) => m.type === "connected")).toBeTruthy();
      for (const client of clients) client.close();
      await Promise.all(clients.map((c) => c.closed));
    });

    it("a call refused after the upgrade (its account's last call slot taken meanwhile) is told over the socket: error message, close 1013", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      await app.parley.services.accounts.setLimits(acct.id, { concurrentCalls: 1 });
      // Another call takes the account's one slot just after this one's check passed, before
      // the socket is open (a race between two connections, made certain here).
      const liveCalls = app.parley.services.liveCalls;
      const check = liveCalls.checkStartable;
      let competitor: string | undefined;
      liveCalls.checkStartable = async (setup) => {
        await check.call(liveCalls, setup);
        competitor = (await liveCalls.begin(setup)).id;
      };
      try {
        const outcome = await upgrade(`${wsBase}/media/ws?agent_id=${agentId}`, { authorization: `Bearer ${acct.key}` });
        const { socket: ws, messages } = outcome;
        if (!ws) throw new Error(`refused over HTTP: ${outcome.status}`);
        const closed = await closeOf(ws);
        expect(closed).toEqual({ code: 1013, reason: "rate_limit_exceeded" });
        expect(messages).toEqual([{ type: "error", code: "rate_limit_exceeded", message: "The account already has 1 live calls, its concurrent-call limit" }]);
      } finally {
        liveCalls.checkStartable = check;
      }
      expect((await callRows(app, acct.id)).map((r) => r.id)).toEqual([competitor]);
      await liveCalls.end(competitor!, { status: "completed", durationMs: 0, transcript: [], recordingPath: null });
    });
  });

  describe("caller audio faster than real time", () => {
    it("native: audio sent 10x faster than real time ends the call with reason audio_overrun, stored failed", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const outcome = await upgrade(`${wsBase}/media/ws?agent_id=${agentId}`, { authorization: `Bearer ${acct.key}` });
      const { socket: ws, messages } = outcome;
      if (!ws) throw new Error(`refused ${outcome.status}`);
      const closed = closeOf(ws);
      // 200 ms of 16 kHz audio every 20 ms.
      const frame = Buffer.alloc(640);
      const flood = setInterval(() => {
        for (let i = 0; i < 10 && ws.readyState === WebSocket.OPEN; i++) ws.send(frame);
      }, 20);
      try {
        await Promise.race([closed, sleep(15_000).then(() => Promise.reject(new Error("the call was not closed")))]);
      } finally {
        clearInterval(flood);
      }
      const callId = messages.find((m) => m.type === "connected").call_id;
      expect(messages.find((m) => m.type === "ended")).toMatchObject({ reason: "audio_overrun" });
      const row = await until("the call to be stored", async () => {
        const r = (await callRows(app, acct.id))[0];
        return r && r.status !== "in_progress" ? r : undefined;
      });
      expect(row).toMatchObject({ id: callId, status: "failed", billed_credits: 1 });
      expect(row.duration).toBeLessThan(15);
    });

    it("native: a frame over 64 KiB closes the connection (1009) and the call ends", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const outcome = await upgrade(`${wsBase}/media/ws?agent_id=${agentId}`, { authorization: `Bearer ${acct.key}` });
      const ws = outcome.socket;
      if (!ws) throw new Error(`refused ${outcome.status}`);
      const closed = closeOf(ws);
      ws.send(Buffer.alloc(256 * 1024));
      const result = await Promise.race([closed, sleep(10_000).then(() => null)]);
      expect(result?.code).toBe(1009);
      const row = await until("the call to be stored", async () => {
        const r = (await callRows(app, acct.id))[0];
        return r && r.status !== "in_progress" ? r : undefined;
      });
      expect(row.status).toBe("completed");
    });
  });

  describe("malformed frames", () => {
    /** Root-mean-square level of the caller channel (left) of a stored call's stereo recording. */
    const callerLevel = (recordingPath: string) => {
      const { samples } = parseWav(readFileSync(recordingPath));
      let sum = 0;
      for (let i = 0; i < samples.length; i += 2) sum += samples[i]! * samples[i]!;
      return Math.sqrt(sum / (samples.length / 2));
    };

    it("are dropped and the call goes on, hearing none of them (native and Twilio); a call beside them is unaffected", async () => {
      const [nativeAcct, twilioAcct, healthyAcct] = [await app.account({ credits: 100 }), await app.account({ credits: 100 }), await app.account({ credits: 100 })];
      const healthy = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${await agentOf(app, healthyAcct)}`, healthyAcct.key);
      healthy.startStreaming();

      const native = await upgrade(`${wsBase}/media/ws?agent_id=${await agentOf(app, nativeAcct)}`, { authorization: `Bearer ${nativeAcct.key}` });
      const twilio = await twilioStart(wsBase, { customParameters: { token: await mediaTokenOf(app, twilioAcct), agent_id: await agentOf(app, twilioAcct) } });
      const nativeWs = native.socket!;
      const twilioWs = twilio.ws;
      const streamSid = () => "MZ" + "0".repeat(32);
      const media = (payload: string) => JSON.stringify({ event: "media", sequenceNumber: "9", streamSid: streamSid(), media: { track: "inbound", chunk: "1", timestamp: "0", payload } });
      // Two seconds of silence from each caller, with garbage between the frames: what the
      // protocols cannot read, an odd number of PCM16 bytes, payloads that are not base64 (Node
      // would decode "AAAA*..." leniently into full-scale audio), unknown message types.
      const silentPcm = Buffer.alloc(640);
      const silentMulaw = Buffer.from(encodeMulaw(new Int16Array(160))).toString("base64");
      for (let i = 0; i < 100; i++) {
        nativeWs.send(silentPcm);
        twilioWs.send(media(silentMulaw));
        if (i % 10 === 0) {
          for (const bad of ["not json", "[]", '{"type":"flood","x":"' + "y".repeat(10_000) + '"}', '{"type":"dtmf","digit":"99"}']) nativeWs.send(bad);
          nativeWs.send(Buffer.alloc(641, 0x80));
          nativeWs.send(randomBytes(1));
          for (const bad of ["not json", '{"event":"flood"}', media("AAAA*".repeat(40)), media("A".repeat(161)), '{"event":"media","media":{"payload":42}}']) twilioWs.send(bad);
          twilioWs.send(randomBytes(320));
        }
        await sleep(20);
      }
      expect([nativeWs.readyState, twilioWs.readyState]).toEqual([WebSocket.OPEN, WebSocket.OPEN]);
      nativeWs.send(JSON.stringify({ type: "hangup" }));
      twilioWs.send(JSON.stringify({ event: "stop", sequenceNumber: "200", streamSid: streamSid(), stop: {} }));
      for (const acct of [nativeAcct, twilioAcct]) {
        const row = await until("the call to be stored", async () => {
          const r = (await callRows(app, acct.id))[0];
          return r && r.status !== "in_progress" ? r : undefined;
        });
        expect(row).toMatchObject({ status: "completed", end_reason: "caller_hangup" });
        expect(JSON.parse(row.transcript!).filter((s: { role: string }) => s.role === "user")).toEqual([]);
        expect(callerLevel(row.recording_path!)).toBeLessThan(50);
      }

      await healthy.waitForAgentSilence(500);
      expect(healthy.audio.length).toBeGreaterThan(20);
      healthy.hangUp();
      const row = await until("the healthy call to end", async () => {
        const r = (await callRows(app, healthyAcct.id))[0];
        return r && r.status !== "in_progress" ? r : undefined;
      });
      expect(row).toMatchObject({ status: "completed", end_reason: "caller_hangup" });
    });
  });

  describe("Twilio start fields", () => {
    it("a From of 100 KB is refused with the frame (1009): no call is stored", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const stream = await twilioStart(wsBase, { customParameters: { token: await mediaTokenOf(app, acct), agent_id: agentId, From: "+1" + "4".repeat(100_000) } });
      const result = await Promise.race([stream.closed, sleep(5000).then(() => null)]);
      expect(result?.code).toBe(1009);
      await sleep(300);
      expect(await callRows(app, acct.id)).toEqual([]);
      stream.ws.terminate();
    });

    it("a To that is not an E.164 number is refused (1008): no call is stored", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const stream = await twilioStart(wsBase, { customParameters: { token: await mediaTokenOf(app, acct), agent_id: agentId, To: "sip:front-desk@example.com" } });
      const result = await Promise.race([stream.closed, sleep(5000).then(() => null)]);
      expect(result).toEqual({ code: 1008, reason: "To: must be an E.164 number" });
      expect(await callRows(app, acct.id)).toEqual([]);
    });

    it("a From that is not an E.164 number (a Twilio Client caller) is stored as null", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const stream = await twilioStart(wsBase, { customParameters: { token: await mediaTokenOf(app, acct), agent_id: agentId, From: "client:alice" } });
      const row = await until("the call to be stored", async () => (await callRows(app, acct.id))[0]);
      expect(row.from_number).toBeNull();
      stream.ws.close();
      await stream.closed;
    });

    it.each([
      ["a callSid not shaped like Twilio's", { callSid: "CA1" }, "callSid: must be CA followed by 32 hex digits"],
      ["a streamSid not shaped like Twilio's", { streamSid: "MZ" + "x".repeat(2000) }, "streamSid: must be MZ followed by 32 hex digits"],
    ])("%s is refused (1008): no call is stored", async (_, ids, reason) => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const stream = await twilioStart(wsBase, { ...ids, customParameters: { token: await mediaTokenOf(app, acct), agent_id: agentId } });
      const result = await Promise.race([stream.closed, sleep(5000).then(() => null)]);
      expect(result).toEqual({ code: 1008, reason });
      expect(await callRows(app, acct.id)).toEqual([]);
    });

    it("custom parameters past the bounds (count, size, type) are refused (1008)", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const token = await mediaTokenOf(app, acct);
      const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, "x"]));
      for (const customParameters of [{ token, agent_id: agentId, ...many }, { token, agent_id: agentId, note: "x".repeat(5000) }, { token, agent_id: agentId, record: false }]) {
        const stream = await twilioStart(wsBase, { customParameters });
        const result = await Promise.race([stream.closed, sleep(5000).then(() => null)]);
        expect(result?.code).toBe(1008);
        expect(result?.reason).toMatch(/^customParameters/);
      }
      expect(await callRows(app, acct.id)).toEqual([]);
    });
  });
});

describe("a media client that stops reading", () => {
  let app: TestApp;
  let wsBase: string;

  beforeAll(async () => {
    app = await startEngineApp({ PARLEY_MEDIA_READ_TIMEOUT_MS: "1500" });
    wsBase = app.baseUrl.replace(/^http/, "ws");
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it("native and Twilio: cut off while the greeting plays, their calls stored ended client_not_reading and billed; a call beside them is unaffected", async () => {
    const [stalledNative, stalledTwilio, healthy] = [await app.account({ credits: 100 }), await app.account({ credits: 100 }), await app.account({ credits: 100 })];
    const native = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${await agentOf(app, stalledNative)}`, stalledNative.key);
    const { call_id: nativeCallId } = await native.waitFor((m) => m.type === "connected");
    native.setReading(false);
    const twilio = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: await mediaTokenOf(app, stalledTwilio), agent_id: await agentOf(app, stalledTwilio) });
    twilio.setReading(false);
    const other = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${await agentOf(app, healthy)}`, healthy.key);
    const { call_id: otherCallId } = await other.waitFor((m) => m.type === "connected");
    other.startStreaming();

    // Both stalled calls end on their own, while the client still holds its end of the connection open.
    const [nativeRow, twilioRow] = await Promise.all(
      [stalledNative, stalledTwilio].map((acct) =>
        until("the stalled call to be stored as ended", async () => {
          const rows = await callRows(app, acct.id);
          return rows.length === 1 && rows[0]!.status !== "in_progress" ? rows[0] : undefined;
        }),
      ),
    );
    for (const row of [nativeRow, twilioRow]) expect(row).toMatchObject({ status: "completed", end_reason: "client_not_reading", billed_credits: 1 });
    expect(nativeRow!.id).toBe(nativeCallId);
    // Their sockets were destroyed by the service: reading again finds the connection gone.
    for (const client of [native, twilio]) {
      client.setReading(true);
      await client.closed;
      expect(client.closeCode).toBe(1006);
    }

    // The call beside them heard its greeting, lives on and ends as its caller decides.
    await other.waitForAgentSilence(500);
    expect(other.audio.length).toBeGreaterThan(20);
    expect((await callRows(app, healthy.id))[0]).toMatchObject({ id: otherCallId, status: "in_progress" });
    other.hangUp();
    const otherRow = await until("the other call to end", async () => {
      const row = (await callRows(app, healthy.id))[0];
      return row && row.status !== "in_progress" ? row : undefined;
    });
    expect(otherRow).toMatchObject({ status: "completed", end_reason: "caller_hangup" });
  });
});

describe("WebSocket upgrades past the per-address rate limit", () => {
  let app: TestApp;
  let wsBase: string;

  beforeAll(async () => {
    app = await startEngineApp({ PARLEY_MEDIA_UPGRADES_PER_MINUTE: "3" });
    wsBase = app.baseUrl.replace(/^http/, "ws");
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  it("are refused 429 rate_limit_exceeded with Retry-After, before any authentication, on both endpoints", async () => {
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await upgrade(`${wsBase}/media/ws?agent_id=agent_x`, { authorization: "Bearer sk_parley_guess" + i }));
    expect(outcomes.map((o) => o.status)).toEqual([401, 401, 401, 429]);
    const limited = outcomes[3]!;
    expect(limited.body.error.code).toBe("rate_limit_exceeded");
    expect(limited.body.error.message).toMatch(/3 WebSocket upgrades per minute/);
    expect(Number(limited.headers?.["retry-after"])).toBeGreaterThan(0);
    expect(Number(limited.headers?.["retry-after"])).toBeLessThanOrEqual(61);
    expect((await upgrade(`${wsBase}/media/twilio`)).status).toBe(429);
  });
});

describe("Twilio streams waiting for their start message", () => {
  let app: TestApp;
  let wsBase: string;

  afterAll(async () => {
    await app?.close();
  });

  /** Opens a /media/twilio socket that sends nothing. */
  async function idleStream(): Promise<UpgradeOutcome> {
    return upgrade(`${wsBase}/media/twilio`);
  }

  it("are capped per address (429); a started call does not count, and a closed one frees its place", async () => {
    app = await startEngineApp({ PARLEY_MEDIA_PENDING_STREAMS_PER_ADDRESS: "2" });
    wsBase = app.baseUrl.replace(/^http/, "ws");
    const acct = await app.account({ credits: 100 });
    const agentId = await agentOf(app, acct);
    const call = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: await mediaTokenOf(app, acct), agent_id: agentId });
    await until("the call to start", async () => ((await callRows(app, acct.id)).length === 1 ? true : undefined));
    const first = await idleStream();
    const second = await idleStream();
    expect([first.status, second.status]).toEqual([101, 101]);
    const third = await idleStream();
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe("rate_limit_exceeded");
    const firstSocket = first.socket!;
    const firstClosed = closeOf(firstSocket);
    firstSocket.close();
    await firstClosed;
    const again = await until("a place to be free", async () => {
      const outcome = await idleStream();
      return outcome.status === 101 ? outcome : undefined;
    });
    for (const o of [second, again]) o.socket!.close();
    call.hangUp();
    call.close();
    await app.close();
  });

  it("are capped in all (503 server_busy), and closed when they send no start within 5 s", async () => {
    app = await startEngineApp({ PARLEY_MEDIA_PENDING_STREAMS: "2" });
    wsBase = app.baseUrl.replace(/^http/, "ws");
    const open = [await idleStream(), await idleStream()];
    expect(open.map((o) => o.status)).toEqual([101, 101]);
    const refused = await idleStream();
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("server_busy");
    expect(Number(refused.headers?.["retry-after"])).toBeGreaterThan(0);
    // The idle sockets do not keep their places: the service closes them.
    const closes = await Promise.all(open.map((o) => closeOf(o.socket!)));
    expect(closes).toEqual([
      { code: 1008, reason: "no start message" },
      { code: 1008, reason: "no start message" },
    ]);
    const after = await idleStream();
    expect(after.status).toBe(101);
    after.socket!.close();
  });

  it("are capped over the carrier endpoints together: idle Twilio and Telnyx streams leave no place on /media/vonage", async () => {
    await app?.close();
    app = await startEngineApp({ PARLEY_MEDIA_PENDING_STREAMS: "2" });
    wsBase = app.baseUrl.replace(/^http/, "ws");
    const waiting = [await upgrade(`${wsBase}/media/twilio`), await upgrade(`${wsBase}/media/telnyx`)];
    expect(waiting.map((o) => o.status)).toEqual([101, 101]);
    const refused = await upgrade(`${wsBase}/media/vonage`);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("server_busy");
    for (const o of waiting) o.socket!.close();
  });
});
