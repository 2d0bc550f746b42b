import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { encodeWav } from "../../engine/audio/wav.js";
import { clientNow } from "../../scripts/bench/media-caller.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { recognise } from "../helpers/recognise.js";
import { createDeskAgent } from "../helpers/desk-agent.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { loudest } from "../helpers/loudest.js";
import { until } from "../helpers/until.js";
import { accessibilityViolations } from "./accessibility.js";
import { launchChromium, signIn, watchProblems } from "./chromium.js";

/**
 * The console's live supervision panel (issue 32) in Chromium, on a real call: a caller on the
 * native protocol (this process) talks to a rules agent; the call's page listens (both sides'
 * levels and the live transcript), has the agent say a line, whispers, takes the call over with
 * the fake microphone (the caller hears it, read back by the recognizer) and hands it back.
 * Its checks rest on what the page shows and the audio's loudness, and on recognizing recorded
 * audio after the fact, not on a live turn being understood: it runs on the other lane.
 * A key that may only read gets Listen and nothing else; leaving the page frees its listener.
 */

// Browser globals, for the functions that run in the page (the project compiles without the DOM library).
declare const document: any;

const RATE = 16000;
const SPEECH = 0.02;
const MANAGER = "This is the manager speaking.";

let app: TestApp;
let acct: TestAccount;
let agentId: string;
let browser: Browser;
let tmp: string;
let wsBase: string;

/** The supervisor's microphone: "yes please" a moment after it opens (the take-over), then silence. */
function microphoneWav(): Buffer {
  const words = fixtureAudio("yes-please", 16);
  const samples = new Int16Array(RATE / 2 + words.length + 3 * RATE);
  samples.set(words, RATE / 2);
  return encodeWav({ sampleRate: RATE, channels: 1, samples });
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "parley-supervision-"));
  const microphone = path.join(tmp, "supervisor.wav");
  writeFileSync(microphone, microphoneWav());
  [app, browser] = await Promise.all([startTestApp({}, { PARLEY_ENGINE: "1" }), launchChromium({ fakeMicrophone: microphone })]);
  wsBase = app.baseUrl.replace(/^http/, "ws");
  acct = await app.account({ credits: 100 });
  agentId = await createDeskAgent(app, acct.key);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const textOf = (page: Page, selector: string) => page.$$eval(selector, (nodes) => nodes.map((n) => (n.textContent ?? "").replace(/\s+/g, " ").trim()));

async function clickButton(page: Page, text: string): Promise<void> {
  const [button] = await page.$$(`xpath/.//section[@aria-labelledby='call-supervision']//button[normalize-space()='${text}']`);
  if (!button) throw new Error(`no button "${text}" in the supervision panel`);
  await button.click();
}

const waitForStatus = (page: Page, text: string, timeout = 15_000) =>
  page.waitForFunction((t: string) => document.querySelector("#supervision-status")?.textContent.includes(t), { timeout }, text);

const waitForLine = (page: Page, text: string, timeout = 20_000) =>
  page.waitForFunction((t: string) => [...document.querySelectorAll("#supervision-transcript li")].some((li: any) => li.textContent.includes(t)), { timeout }, text);

/** Waits until a side's level meter shows speech. */
const waitForLevel = (page: Page, side: "caller" | "agent", timeout = 15_000) =>
  page.waitForFunction((id: string) => Number(document.querySelector(id)?.value) > 0.05, { timeout, polling: 50 }, `#supervision-${side}-level`);

/** Listeners opened from here with the owner's key: every one accepted, or the status of the refusal. */
async function openListeners(callId: string, count: number): Promise<Array<WebSocket | number>> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<WebSocket | number>((resolve, reject) => {
          const ws = new WebSocket(`${wsBase}/media/listen?call_id=${callId}`, { headers: { authorization: `Bearer ${acct.key}` } });
          ws.once("open", () => resolve(ws));
          ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
          ws.once("error", reject);
        }),
    ),
  );
}

/** Closes the listeners that opened, once the service has seen them go. */
async function closeAll(opened: Array<WebSocket | number>): Promise<void> {
  await Promise.all(opened.map((ws) => (typeof ws === "number" ? undefined : new Promise((resolve) => (ws.once("close", resolve), ws.close())))));
}

describe("the console's live call page", () => {
  it("listens, says, whispers, takes the call over with the microphone and hands it back", async () => {
    const caller = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agentId}`, acct.key, RATE);
    const { call_id: callId } = await caller.waitFor((m) => m.type === "connected");
    caller.startStreaming();

    const page = await browser.newPage();
    const problems = watchProblems(page);
    // The accessibility audit's script is injected: the console's CSP rightly refuses it otherwise.
    await page.setBypassCSP(true);
    await signIn(page, app.baseUrl, acct.key);
    await page.goto(`${app.baseUrl}/console/calls/${callId}`);
    await page.waitForSelector("#call-supervision");
    expect(await textOf(page, "#supervision-status")).toEqual(["Not listening."]);

    // Listen: the caller's words reach the page (their level, then the recognized line).
    await clickButton(page, "Listen");
    await waitForStatus(page, "Listening");
    await caller.waitForAgentSilence();
    // (say() resolves once the words are sent: the meter is watched while they are.)
    const callerHeard = waitForLevel(page, "caller");
    await caller.say(fixtureAudio("opening-hours", 16));
    await callerHeard;
    await page.waitForFunction(() => document.querySelectorAll("#supervision-transcript .line-user").length > 0, { timeout: 20_000 });
    await caller.waitForAgentSilence(900);

    // Say: the agent says the line in its voice; the page hears it (the agent's level) and shows it.
    await page.type("#supervision-say", MANAGER);
    await clickButton(page, "Say");
    await page.waitForFunction(() => document.body.textContent.includes("the agent says “This is the manager speaking.” next"));
    await waitForLevel(page, "agent");
    await waitForLine(page, MANAGER);
    await caller.waitFor((m) => m.type === "transcript" && m.role === "agent" && m.content === MANAGER);
    await caller.waitForAgentSilence(700);
    // An empty line is the API's 400, shown by the field; nothing is said.
    await clickButton(page, "Say");
    await page.waitForSelector("#supervision-say-error");
    expect(await page.$eval("#supervision-say", (input) => input.getAttribute("aria-invalid"))).toBe("true");

    // Whisper: accepted, shown as a note, never spoken.
    await page.type("#supervision-whisper", "Offer a discount.");
    await clickButton(page, "Whisper");
    await waitForLine(page, "A supervisor whispered to the agent.");
    expect(await accessibilityViolations(page)).toEqual([]);

    const line = () => app.parley.media!.gateway.monitored(acct.id, callId)!.line;

    // Take over: the microphone (the fake device says "yes please") goes to the caller, not the agent's voice.
    const tookOverAt = clientNow();
    await clickButton(page, "Take over");
    await waitForStatus(page, "You have the call");
    await waitForLine(page, "A supervisor took the call over");
    const agentLinesAtTakeOver = (await textOf(page, "#supervision-transcript .line-agent")).length;
    await until("the supervisor's words played to the caller", () => loudest(caller.audioSince(tookOverAt)) > SPEECH, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await recognise(caller.audioSince(tookOverAt), RATE)).toMatch(/yes/);
    // The caller speaks: the supervisor hears them; the agent answers nothing.
    const callerHeardMeanwhile = waitForLevel(page, "caller");
    await caller.say(fixtureAudio("opening-hours", 16));
    await callerHeardMeanwhile;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await textOf(page, "#supervision-transcript .line-agent")).length).toBe(agentLinesAtTakeOver);

    // Hand back: the page listens again, the agent has the call (that it answers again is
    // test/e2e/supervision.test.ts's, on the real-time lane).
    await clickButton(page, "Hand back");
    await waitForStatus(page, "Listening");
    await waitForLine(page, "The agent has the call again.");
    expect([line().takenOver, line().listenerTotal]).toEqual([false, 1]);

    // A key that may only read: Listen, and nothing that acts on the call.
    const reader = await browser.newPage();
    await signIn(reader, app.baseUrl, await app.key(acct.id, ["calls:read", "agents:read"]));
    await reader.goto(`${app.baseUrl}/console/calls/${callId}`);
    await reader.waitForFunction(() => document.body.textContent.includes("This key may listen only"));
    const disabled = await reader.$$eval("section.supervision button, section.supervision input", (nodes) =>
      nodes.map((n: any) => `${n.textContent.trim() || n.id}:${n.disabled}`),
    );
    expect(disabled).toEqual(expect.arrayContaining(["Listen:false", "Take over:true", "supervision-say:true", "Say:true", "supervision-whisper:true", "Whisper:true"]));
    await reader.close();

    // Leaving the page within the console closes its listener: five more fit (a call takes five at most).
    await page.click("a.button[href$='/calls']");
    await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Calls");
    let opened: Array<WebSocket | number> = [];
    await until("the page's listener gone", async () => {
      await closeAll(opened);
      opened = await openListeners(callId, 5);
      return opened.every((ws) => typeof ws !== "number");
    }, 5000);
    await closeAll(opened);

    // A tab that loads another page stops listening (the page would otherwise be kept, socket
    // open, in the browser's back-forward cache) and, in the middle of a take-over, hands the call back.
    for (const [button, status] of [["Listen", "Listening"], ["Take over", "You have the call"]] as const) {
      await page.goto(`${app.baseUrl}/console/calls/${callId}`);
      await page.waitForSelector("#call-supervision");
      await clickButton(page, button);
      await waitForStatus(page, status);
      expect([line().listenerTotal, line().takenOver]).toEqual([1, button === "Take over"]);
      await page.goto(`${app.baseUrl}/console/calls`);
      await until(`the page's ${button} socket closed`, () => !line().takenOver && line().listenerTotal === 0, 5000);
    }

    // The call ends: the page shows it ended, without the panel.
    await page.goto(`${app.baseUrl}/console/calls/${callId}`);
    await page.waitForSelector("#call-supervision");
    caller.hangUp();
    caller.close();
    await page.waitForFunction(() => !document.querySelector("#call-supervision"), { timeout: 15_000 });
    expect(problems).toEqual([]);
  }, 150_000);
});
