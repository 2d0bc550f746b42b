import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { bytesToPcm16, pcm16ToBytes } from "../../engine/index.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { clientNow } from "../../scripts/bench/media-caller.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { recognise } from "../helpers/recognise.js";
import { createDeskAgent } from "../helpers/desk-agent.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { loudest } from "../helpers/loudest.js";
import { until } from "../helpers/until.js";

// Live supervision (issue 32) on a real call: a caller on the native protocol talks to a rules
// agent (pocketsphinx, Flite); a supervisor listens over /media/listen (both sides, and the
// transcript), has the agent say a line, whispers, takes the call over (the caller hears the
// supervisor, the supervisor hears the caller, the agent answers nothing) and hands it back.

const SPEECH = 0.02;

let app: TestApp;
let acct: TestAccount;
let other: TestAccount;
let agentId: string;
let wsBase: string;

/** A supervisor's socket: the JSON messages and the 16 kHz frames it got, each with its arrival time. */
class Supervisor {
  readonly messages: Array<{ at: number; message: any }> = [];
  readonly frames: Array<{ at: number; pcm: Int16Array }> = [];
  constructor(readonly ws: WebSocket) {
    ws.on("message", (data, isBinary) => {
      if (isBinary) this.frames.push({ at: Date.now(), pcm: bytesToPcm16(data as Buffer) });
      else this.messages.push({ at: Date.now(), message: JSON.parse(String(data)) });
    });
  }

  static open(query: string, key?: string): Promise<Supervisor> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${wsBase}/media/listen?${query}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
      const supervisor = new Supervisor(ws);
      ws.once("open", () => resolve(supervisor));
      ws.once("unexpected-response", (_req, res) => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode })));
      ws.once("error", reject);
    });
  }

  /** One side (0 caller, 1 agent) of the stereo frames that came in [from, to]. */
  side(channel: 0 | 1, from: number, to = Date.now()): Int16Array {
    const frames = this.frames.filter((f) => f.at >= from && f.at <= to);
    const out = new Int16Array(frames.length * 320);
    frames.forEach((f, k) => {
      for (let i = 0; i < 320; i++) out[k * 320 + i] = f.pcm[2 * i + channel]!;
    });
    return out;
  }

  said(role: "agent" | "user", since = 0): string[] {
    return this.messages.filter((m) => m.at >= since && m.message.type === "transcript" && m.message.role === role).map((m) => m.message.content);
  }

  close(): void {
    this.ws.close();
  }
}

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" });
  wsBase = app.baseUrl.replace(/^http/, "ws");
  acct = await app.account();
  other = await app.account();
  agentId = await createDeskAgent(app, acct.key);
}, 60_000);

afterAll(async () => {
  await app?.close();
});

describe("a supervisor on a live call", () => {
  it("listens to both sides, says a line, whispers, takes the call over and hands it back", async () => {
    const caller = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key, 16000);
    const { call_id: callId } = await caller.waitFor((m) => m.type === "connected");
    caller.startStreaming();

    // Who may listen: the owning account's key (calls:read); not another account's, not a key without calls:read.
    await expect(Supervisor.open(`call_id=${callId}`, other.key)).rejects.toMatchObject({ status: 403 });
    const numbersOnly = await app.key(acct.id, ["numbers:read"]);
    await expect(Supervisor.open(`call_id=${callId}`, numbersOnly)).rejects.toMatchObject({ status: 403 });
    const listener = await Supervisor.open(`call_id=${callId}&channels=2`, await app.key(acct.id, ["calls:read"]));
    await until("the listener told it listens", () => listener.messages.some((m) => m.message.type === "listening"));
    expect(listener.messages[0]!.message).toMatchObject({ type: "listening", call_id: callId, mode: "listen", format: "pcm16", sample_rate: 16000, channels: 2 });

    // Both sides heard: the agent's greeting on the right, the caller's question on the left.
    await caller.waitForAgentSilence();
    const askedAt = Date.now();
    await caller.waitForAgentSilence(900, await caller.say(fixtureAudio("opening-hours", 16)));
    await until("the answer in the listener's transcript", () => listener.said("agent", askedAt).some((s) => /monday to friday/i.test(s)), 20_000);
    expect(loudest(listener.side(0, askedAt))).toBeGreaterThan(SPEECH);
    expect(loudest(listener.side(1, askedAt))).toBeGreaterThan(SPEECH);
    expect(listener.said("user", askedAt).join(" ")).toMatch(/opening hours/);

    // A token from the API works once, from a socket without a key.
    const token = (await app.request("POST", `/v1/calls/${callId}/listen-token`, { key: acct.key, body: {} })).body;
    expect(token).toMatchObject({ call_id: callId, mode: "listen", token: expect.stringMatching(/^lst_/) });
    const byToken = await Supervisor.open(`call_id=${callId}&token=${token.token}`);
    await until("the token's listener told it listens", () => byToken.messages.some((m) => m.message.type === "listening"));
    byToken.close();
    await expect(Supervisor.open(`call_id=${callId}&token=${token.token}`)).rejects.toMatchObject({ status: 401 });
    // A flood of listeners: five per call, the sixth refused (429) before its handshake.
    await until("the token's listener gone", () => byToken.ws.readyState === WebSocket.CLOSED);
    const more = await Promise.all(Array.from({ length: 4 }, () => Supervisor.open(`call_id=${callId}`, acct.key)));
    await expect(Supervisor.open(`call_id=${callId}`, acct.key)).rejects.toMatchObject({ status: 429 });
    for (const extra of more) extra.close();
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Say: the agent says the line next, in its voice; the caller hears it and it is in the transcript.
    const sayAt = Date.now();
    const said = await app.request("POST", `/v1/calls/${callId}/say`, { key: acct.key, body: { text: "This is the manager speaking." } });
    expect(said.status, JSON.stringify(said.body)).toBe(202);
    await caller.waitFor((m) => m.type === "transcript" && m.role === "agent" && m.content === "This is the manager speaking.");
    await caller.waitForAgentSilence(700, sayAt - 1);
    // Whisper: accepted, never spoken (a rules agent cannot follow free text; a chat model's use of it is unit-tested).
    expect((await app.request("POST", `/v1/calls/${callId}/whisper`, { key: acct.key, body: { text: "Offer a discount." } })).status).toBe(202);
    expect((await app.request("POST", `/v1/calls/${callId}/say`, { key: acct.key, body: { text: "" } })).status).toBe(400);
    expect((await app.request("POST", `/v1/calls/${callId}/say`, { key: other.key, body: { text: "hi" } })).status).toBe(403);

    // Take-over: the supervisor's socket speaks; the caller hears it instead of the agent.
    const supervisor = await Supervisor.open(`call_id=${callId}&mode=takeover&channels=2`, acct.key);
    await until("the take-over confirmed", () => supervisor.messages.some((m) => m.message.type === "listening" && m.message.mode === "takeover"));
    const tookOverAt = Date.now();
    // One take-over at a time: a second is closed at once, saying why.
    const second = await Supervisor.open(`call_id=${callId}&mode=takeover`, acct.key);
    const refused = await new Promise<{ code: number; reason: string }>((resolve) => second.ws.once("close", (code, reason) => resolve({ code, reason: String(reason) })));
    expect(refused).toEqual({ code: 4009, reason: "the call is already taken over" });
    supervisor.ws.send(pcm16ToBytes(fixtureAudio("yes-please", 16)));
    const heardFrom = clientNow();
    await until("the supervisor's words played to the caller", () => loudest(caller.audioSince(heardFrom)) > SPEECH, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await recognise(caller.audioSince(heardFrom), 16000)).toMatch(/yes/);
    // The caller speaks: the supervisor hears them (left side) and sees the words; the agent answers nothing.
    const spokeAt = Date.now();
    await caller.say(fixtureAudio("opening-hours", 16));
    await until("the caller's words in the supervisor's transcript", () => supervisor.said("user", spokeAt).length > 0, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(loudest(supervisor.side(0, spokeAt))).toBeGreaterThan(SPEECH);
    expect(supervisor.said("agent", tookOverAt)).toEqual([]);

    // Hand-back through the API: the agent answers the caller's next words again.
    expect((await app.request("POST", `/v1/calls/${callId}/hand-back`, { key: acct.key, body: {} })).status).toBe(202);
    const backAt = Date.now();
    await caller.say(fixtureAudio("opening-hours", 16));
    await until("the agent answering after the hand-back", () => listener.said("agent", backAt).some((s) => /monday to friday/i.test(s)), 20_000);

    supervisor.close();
    listener.close();
    caller.hangUp();
    caller.close();
    await until("the call stored", async () => (await app.request("GET", `/v1/calls/${callId}`, { key: acct.key })).body.status === "completed", 10_000);
    const stored = (await app.request("GET", `/v1/calls/${callId}?include=transcript`, { key: acct.key })).body.transcript;
    expect(stored.map((s: { content: string }) => s.content)).toContain("This is the manager speaking.");
    expect(JSON.stringify(stored)).not.toContain("Offer a discount");
  }, 120_000);
});
