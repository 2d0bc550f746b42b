import { readFileSync } from "node:fs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWav } from "../../engine/audio/wav.js";
import { EmbeddedSpeech } from "../../engine/index.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { logLines } from "../helpers/log-lines.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { untilValue } from "../helpers/until.js";

// Redaction (issue 32): a caller reads a card number out, digit by digit, to an agent whose
// `redact` lists card_number. The stored transcript, the call's events, the service's log (at
// every level) and the recording's caller channel must not hold it.

const CARD_WORDS = "four five three two zero one five one one two eight three zero three six six";
/** Four or more digits said in a row, as the recognizer writes them. */
const SPOKEN_DIGITS = /\b(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\s+){3}(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b/;
const RATE = 16000;

let app: TestApp;
let acct: TestAccount;
let agentId: string;
const log = logLines();
let cardLine: Int16Array;

beforeAll(async () => {
  app = await startTestApp({ logLevel: "trace" }, { PARLEY_ENGINE: "1" }, pino({ level: "trace" }, log.destination));
  acct = await app.account();
  const agent = await app.request("POST", "/v1/agents", {
    key: acct.key,
    body: { name: "Ava", system_prompt: "You take payments for Acme Dental.", voice_id: "flite-kal", first_message: "Hello, this is Ava from Acme Dental.", redact: ["card_number"], metadata: { business_name: "Acme Dental" } },
  });
  expect(agent.status, JSON.stringify(agent.body)).toBe(201);
  expect(agent.body.redact).toEqual(["card_number"]);
  agentId = agent.body.id;
  const speech = new EmbeddedSpeech();
  cardLine = await speech.render(`my card number is ${CARD_WORDS}`, "flite-rms", RATE, new AbortController().signal);
  await speech.close();
}, 60_000);

afterAll(async () => {
  await app?.close();
});

describe("a card number said in words, on an agent that redacts card numbers", () => {
  it("is [card_number] in the transcript, absent from the events and the log, and a tone in the recording", async () => {
    const wsBase = app.baseUrl.replace(/^http/, "ws");
    const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key, RATE);
    const { call_id: callId } = await client.waitFor((m) => m.type === "connected");
    client.startStreaming();
    await client.waitForAgentSilence();
    // The caller's own client is told what was heard (its own words, never stored): the recognizer read the number.
    const saidAt = await client.say(cardLine);
    const heard = await client.waitFor((m) => m.type === "transcript" && m.role === "user", saidAt);
    expect(heard.content).toMatch(SPOKEN_DIGITS);
    await client.waitForAgentSilence(900, saidAt);
    await client.say(fixtureAudio("goodbye", 16));
    await client.waitForAgentSilence(900);
    client.hangUp();
    client.close();

    const call = await untilValue("the call stored as ended", async () => {
      const res = await app.request("GET", `/v1/calls/${callId}?include=transcript,analysis,tool_calls`, { key: acct.key });
      return res.body.status === "completed" && res.body.analysis && res.body;
    });
    const said = call.transcript.find((s: { role: string; content: string }) => s.role === "user" && s.content.includes("[card_number]"));
    expect(said, JSON.stringify(call.transcript)).toBeDefined();
    expect(said.content).toMatch(/^my card number is \[card_number\]/);
    expect(JSON.stringify(call)).not.toMatch(SPOKEN_DIGITS);

    const events = (await app.request("GET", `/v1/events?call_id=${callId}`, { key: acct.key })).body.data;
    expect(events.map((e: { event: string }) => e.event)).toContain("call.completed");
    expect(JSON.stringify(events)).not.toMatch(SPOKEN_DIGITS);
    expect(JSON.stringify(events)).toContain("[card_number]");

    const logged = log.lines.map((line) => JSON.stringify(line)).join("\n");
    expect(log.lines.length).toBeGreaterThan(50);
    expect(logged).not.toMatch(SPOKEN_DIGITS);

    // The recording: the caller's side where the number was said is the tone; the agent's side there is untouched.
    const row = await app.parley.services.db.selectFrom("calls").select("recording_path").where("id", "=", callId).executeTakeFirstOrThrow();
    const wav = parseWav(readFileSync(row.recording_path!));
    expect(wav.channels).toBe(2);
    const next = call.transcript.find((s: { timestamp: number }) => s.timestamp > said.timestamp);
    const from = Math.floor(said.timestamp * wav.sampleRate);
    const to = Math.floor((next?.timestamp ?? said.timestamp + 5) * wav.sampleRate);
    expect(to - from).toBeGreaterThan(wav.sampleRate * 3);
    const tone = (i: number) => Math.round(3000 * Math.sin((2 * Math.PI * 1000 * i) / wav.sampleRate)) + 0; // + 0: no -0
    for (let i = from; i < to; i += 97) expect(wav.samples[2 * i]).toBe(tone(i));
    // Before the number (the greeting, the caller silent) the caller's side is no tone.
    const before = Array.from({ length: 200 }, (_, k) => k * 37).filter((i) => wav.samples[2 * i] !== tone(i));
    expect(before.length).toBeGreaterThan(150);
  }, 120_000);
});
