import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../engine/audio/wav.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { accessibilityViolations } from "./accessibility.js";
import { launchChromium, signIn, watchProblems } from "./chromium.js";

/**
 * The web console in Chromium against the real service and engine: sign in, create an agent
 * through the form (an API validation error shows by its field), talk to it from the browser
 * with a fake microphone that plays fixture caller audio, hang up, and read the call's page.
 */

// Browser globals, for the functions that run in the page (the project compiles without the DOM library).
declare const document: any;
declare const location: any;
declare const sessionStorage: any;
declare const localStorage: any;

const GREETING = "Hello, Acme Dental here. How can I help?";
const ANSWER = "We are open from nine to five, Monday to Friday.";
const RATE = 16000;

let app: TestApp;
let acct: TestAccount;
let browser: Browser;
let tmp: string;

/**
 * What the fake microphone plays, once: silence while the greeting plays, then the caller's
 * question, then silence (Chromium's fake device takes 16-bit PCM WAV).
 */
function microphoneWav(): Buffer {
  const question = fixtureAudio("opening-hours", 16);
  const lead = 6 * RATE;
  const tail = 3 * RATE;
  const samples = new Int16Array(lead + question.length + tail);
  samples.set(question, lead);
  return encodeWav({ sampleRate: RATE, channels: 1, samples });
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "parley-console-"));
  const microphone = path.join(tmp, "caller.wav");
  writeFileSync(microphone, microphoneWav());
  [app, browser] = await Promise.all([startTestApp({}, { PARLEY_ENGINE: "1" }), launchChromium({ fakeMicrophone: microphone })]);
  acct = await app.account({ credits: 100 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Replaces a field's text as typing would (select all, type). */
async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  await page.click(selector, { count: 3 });
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyA");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  await page.type(selector, text);
}

const textOf = (page: Page, selector: string) => page.$$eval(selector, (nodes) => nodes.map((n) => (n.textContent ?? "").replace(/\s+/g, " ").trim()));

describe("the web console", () => {
  it("signs in, creates an agent through its form, talks to it from the browser and shows the call", async () => {
    const page = await browser.newPage();
    const problems = watchProblems(page);
    await page.goto(`${app.baseUrl}/console/`);

    // Sign in: a wrong key is refused, the right one kept in sessionStorage only.
    await page.waitForSelector("#api-key");
    await page.type("#api-key", "sk_parley_wrong");
    await page.click("button[type=submit]");
    await page.waitForSelector(".alert-error");
    expect((await textOf(page, ".alert-error")).join(" ")).toContain("invalid_api_key");
    await typeInto(page, "#api-key", acct.key);
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Agents");
    expect(page.url()).toBe(`${app.baseUrl}/console/agents`);
    const storage = await page.evaluate(() => ({ session: sessionStorage.getItem("parley.apiKey"), local: localStorage.length, cookie: document.cookie }));
    expect(storage).toEqual({ session: acct.key, local: 0, cookie: "" });
    expect(await page.cookies()).toEqual([]);

    // Create an agent; a temperature out of range comes back from the API, shown by its field.
    await page.click("a[href='/console/agents/new']");
    await page.waitForSelector("#agent-name");
    await page.waitForFunction(() => document.querySelector("#agent-voice")?.value.startsWith("flite-"));
    await page.type("#agent-name", "Front desk");
    await page.type("#agent-system-prompt", "You answer questions for Acme Dental.");
    await page.type("#agent-first-message", GREETING);
    await page.select("#agent-voice", "flite-slt");
    await page.type("#agent-temperature", "5");
    await typeInto(page, "#agent-metadata", JSON.stringify({ business_name: "Acme Dental", faq: [{ question: "What are your opening hours?", answer: ANSWER }] }));
    await page.click("form.agent-form button[type=submit]");
    await page.waitForSelector("#agent-temperature-error");
    expect(await textOf(page, "#agent-temperature-error")).toEqual(["must be from 0.0 to 1.0"]);
    const temperature = await page.$eval("#agent-temperature", (input) => ({ invalid: input.getAttribute("aria-invalid"), describedBy: input.getAttribute("aria-describedby") }));
    expect(temperature).toEqual({ invalid: "true", describedBy: expect.stringContaining("agent-temperature-error") });
    expect((await app.request("GET", "/v1/agents", { key: acct.key })).body.total).toBe(0);

    await typeInto(page, "#agent-temperature", "0.4");
    await page.click("form.agent-form button[type=submit]");
    await page.waitForFunction(() => /\/console\/agents\/agent_[0-9A-Za-z]+$/.test(location.pathname));
    expect(await page.$("#agent-temperature-error")).toBeNull();
    const agentId = page.url().split("/").pop()!;
    const agent = (await app.request("GET", `/v1/agents/${agentId}`, { key: acct.key })).body;
    expect(agent).toMatchObject({ name: "Front desk", first_message: GREETING, voice_id: "flite-slt", temperature: 0.4, metadata: { faq: [{ answer: ANSWER }] } });

    // Talk: the fake microphone asks for the opening hours once the greeting has played.
    const [talk] = await page.$$("xpath/.//button[normalize-space()='Talk']");
    await talk!.click();
    await page.waitForFunction((greeting: string) => [...document.querySelectorAll(".live-transcript .line-agent .what")].some((n: any) => n.textContent === greeting), { timeout: 30_000 }, GREETING);
    await page.waitForFunction(() => [...document.querySelectorAll(".live-transcript .line-user .what")].some((n: any) => /opening hours/.test(n.textContent ?? "")), { timeout: 30_000 });
    await page.waitForFunction((answer: string) => [...document.querySelectorAll(".live-transcript .line-agent .what")].some((n: any) => n.textContent?.startsWith(answer)), { timeout: 30_000 }, ANSWER);
    // Each agent turn's latency, live: the greeting and the answer.
    await page.waitForFunction(() => document.querySelectorAll(".talk svg.latency-chart g.turn").length >= 2);
    const [hangUp] = await page.$$("xpath/.//button[normalize-space()='Hang up']");
    await hangUp!.click();
    await page.waitForSelector("xpath/.//a[normalize-space()=\"Open the call's page\"]", { timeout: 15_000 });
    expect((await textOf(page, ".ended")).join(" ")).toContain("caller hangup");

    // The call's page: transcript, a recording that loads, the latency chart, the events.
    const [open] = await page.$$("xpath/.//a[normalize-space()=\"Open the call's page\"]");
    await open!.click();
    await page.waitForFunction(() => /\/console\/calls\/call_[0-9A-Za-z]+$/.test(location.pathname));
    const callId = page.url().split("/").pop()!;
    const call = (await app.request("GET", `/v1/calls/${callId}?include=transcript,latency`, { key: acct.key })).body;
    expect(call).toMatchObject({ status: "completed", direction: "web", agent_id: agentId });
    expect(call.transcript[0]).toMatchObject({ role: "agent", content: GREETING });
    expect(call.transcript).toContainEqual(expect.objectContaining({ role: "user", content: expect.stringMatching(/opening hours/) }));

    await page.waitForFunction((n: number) => document.querySelectorAll("ol.transcript .line-button").length === n, {}, call.transcript.length);
    expect(await textOf(page, "ol.transcript .line-user .what")).toContainEqual(expect.stringMatching(/opening hours/));
    await page.waitForFunction(() => (document.querySelector("audio")?.duration ?? 0) > 0, { timeout: 15_000 });
    const recording = await page.$eval("audio", async (audio) => {
      const res = await fetch((audio as any).currentSrc);
      return { status: res.status, type: res.headers.get("content-type"), duration: (audio as any).duration };
    });
    expect(recording).toMatchObject({ status: 200, type: "audio/wav" });
    expect(Math.abs(recording.duration - call.duration)).toBeLessThan(2);
    // Clicking a line plays the recording from that line's moment.
    const lines = await page.$$("ol.transcript .line-button");
    await lines[2]!.click();
    await page.waitForFunction((at: number) => Math.abs(document.querySelector("audio").currentTime - at) < 1, {}, call.transcript[2].timestamp);

    expect(call.latency.turns.length).toBeGreaterThanOrEqual(2);
    await page.waitForFunction((n: number) => document.querySelectorAll("svg.latency-chart g.turn").length === n, {}, call.latency.turns.length);
    const bars = await page.$$eval("svg.latency-chart g.turn", (groups) => groups.map((g) => g.querySelectorAll("rect.stage").length));
    expect(bars.every((n) => n >= 1)).toBe(true);
    // The answer's turn shows every stage from the end of speech to the first frame.
    expect(Math.max(...bars)).toBe(5);
    await page.waitForFunction(() => [...document.querySelectorAll(".events code")].some((n: any) => n.textContent === "call.completed"), { timeout: 15_000 });

    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it("plays the agent's audio through the playback worklet and drops all of it at once on clear (barge-in)", async () => {
    const page = await browser.newPage();
    const problems = watchProblems(page);
    await page.goto(`${app.baseUrl}/console/`);
    const result = await page.evaluate(async () => {
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const assets = document.querySelector("script[type=module]").src.replace(/app\.js$/, "");
      const context = new (globalThis as any).AudioContext();
      await context.audioWorklet.addModule(`${assets}audio/playback-worklet.js`);
      const node = new (globalThis as any).AudioWorkletNode(context, "parley-playback", {
        numberOfInputs: 0,
        numberOfOutputs: 1,
        outputChannelCount: [1],
        processorOptions: { inputRate: 16000, jitterMs: 80 },
      });
      const analyser = context.createAnalyser();
      node.connect(analyser);
      analyser.connect(context.destination);
      const messages: any[] = [];
      node.port.onmessage = (event: any) => messages.push(event.data);
      const level = () => {
        const buffer = new Float32Array(analyser.fftSize);
        analyser.getFloatTimeDomainData(buffer);
        return Math.max(...buffer.map(Math.abs));
      };
      const frame = () => {
        const pcm = new Int16Array(320);
        for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(16000 * Math.sin((2 * Math.PI * 440 * i) / 16000));
        node.port.postMessage({ type: "audio", pcm: pcm.buffer }, [pcm.buffer]);
      };
      // Two seconds of the agent's voice as the server sends it (20 ms PCM16 frames), then a mark.
      for (let i = 0; i < 100; i++) frame();
      node.port.postMessage({ type: "mark", name: "turn-1" });
      await sleep(400);
      const playing = level();
      node.port.postMessage({ type: "clear" });
      await sleep(300);
      const afterClear = level();
      const cleared = messages.splice(0);
      // One short frame alone (the end of a reply) is played, not held back waiting for more.
      frame();
      await sleep(400);
      const tail = messages.splice(0);
      await context.close();
      return { playing, afterClear, cleared, tail };
    });
    expect(result.playing).toBeGreaterThan(0.3);
    expect(result.afterClear).toBe(0);
    expect(result.cleared).toEqual([
      { type: "speaking", speaking: true },
      { type: "speaking", speaking: false },
      { type: "mark", name: "turn-1" },
      { type: "cleared", droppedMs: expect.any(Number) },
    ]);
    // Most of the two seconds was still queued when the clear came.
    expect(result.cleared[3].droppedMs).toBeGreaterThan(1000);
    expect(result.tail).toEqual([
      { type: "speaking", speaking: true },
      { type: "speaking", speaking: false },
    ]);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it("shows what a key may do, as GET /v1/account/key says", async () => {
    const limited = await app.account({ permissions: ["calls:read", "agents:write"] });
    const page = await browser.newPage();
    const problems = watchProblems(page);
    await signIn(page, app.baseUrl, limited.key);
    await page.click("nav a[href='/console/account']");
    await page.waitForSelector("ul.permissions");
    const shown = await page.$$eval("ul.permissions li", (items) => items.map((li: any) => [li.dataset.permission, li.className]));
    expect(Object.fromEntries(shown)).toEqual({
      "account:read": "denied",
      "agents:read": "granted",
      "agents:write": "granted",
      "calls:read": "granted",
      "calls:write": "denied",
      "numbers:read": "denied",
      "numbers:write": "denied",
      "webhooks:read": "denied",
      "webhooks:write": "denied",
      "campaigns:read": "denied",
      "campaigns:write": "denied",
      "appointments:read": "denied",
      "appointments:write": "denied",
      "secrets:read": "denied",
      "secrets:write": "denied",
      "knowledge:read": "denied",
      "knowledge:write": "denied",
    });
    // The account itself is not this key's to read: the page says so.
    expect((await textOf(page, ".alert-error")).join(" ")).toContain("forbidden");
    const all = await app.key(limited.id);
    expect((await app.request("GET", "/v1/agents", { key: all })).body.total).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);
  it("has no WCAG 2.1 A or AA failures axe-core can find on its main pages (after the call above)", async () => {
    const page = await browser.newPage();
    // The console's CSP refuses the injected audit script, rightly; this page lets it in.
    await page.setBypassCSP(true);
    await page.goto(`${app.baseUrl}/console/`);
    await page.waitForSelector("#api-key");
    const found: Record<string, string[]> = { "sign-in": await accessibilityViolations(page) };
    await page.type("#api-key", acct.key);
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Agents");
    const agentId = (await app.request("GET", "/v1/agents", { key: acct.key })).body.data[0].id;
    const callId = (await app.request("GET", "/v1/calls", { key: acct.key })).body.data[0].id;
    const pages: Array<[string, string, string]> = [
      ["agents", "/console/agents", "table"],
      ["agent", `/console/agents/${agentId}`, "#agent-name"],
      ["new agent", "/console/agents/new", "#agent-name"],
      ["talk", `/console/agents/${agentId}/talk`, "button.call-button"],
      ["calls", "/console/calls", "table"],
      ["call", `/console/calls/${callId}`, "svg.latency-chart"],
      ["phone numbers", "/console/phone-numbers", "h1"],
      ["webhooks", "/console/webhooks", "h1"],
      ["campaigns", "/console/campaigns", "h1"],
      ["account", "/console/account", "ul.permissions"],
    ];
    for (const [name, path, ready] of pages) {
      await page.goto(`${app.baseUrl}${path}`);
      await page.waitForSelector(ready);
      await page.waitForFunction(() => ![...document.querySelectorAll("[role=status]")].some((n: any) => n.textContent === "Loading…"));
      found[name] = await accessibilityViolations(page);
    }
    expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length > 0))).toEqual({});
    await page.close();
  }, 60_000);

  it("deletes an ended call's content from its page after a confirmation, and keeps the billing record (after the call above)", async () => {
    const page = await browser.newPage();
    const problems = watchProblems(page);
    await signIn(page, app.baseUrl, acct.key);
    const callId = (await app.request("GET", "/v1/calls", { key: acct.key })).body.data[0].id;
    const before = (await app.request("GET", `/v1/calls/${callId}?include=transcript,recording,analysis,latency`, { key: acct.key })).body;
    expect(before.transcript.length).toBeGreaterThan(0);
    await page.goto(`${app.baseUrl}/console/calls/${callId}`);
    await page.waitForSelector("ol.transcript");
    const dialogs: string[] = [];
    // The first confirmation is dismissed (nothing is deleted), the second accepted.
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void (dialogs.length === 1 ? dialog.dismiss() : dialog.accept());
    });
    const deleteButton = async () => (await page.$$("xpath/.//button[normalize-space()='Delete content']"))[0];
    await (await deleteButton())!.click();
    await expect.poll(() => dialogs.length).toBe(1);
    expect(dialogs[0]).toContain("cannot be undone");
    expect((await app.request("GET", `/v1/calls/${callId}?include=transcript`, { key: acct.key })).body.transcript.length).toBeGreaterThan(0);

    await (await deleteButton())!.click();
    await page.waitForFunction(() => document.querySelector("ol.transcript") === null && document.body.textContent.includes("No transcript."), { timeout: 10_000 });
    expect(dialogs).toHaveLength(2);
    expect(await deleteButton()).toBeUndefined();
    expect((await textOf(page, "section[aria-labelledby=call-recording] p")).join(" ")).toContain("No recording.");
    expect((await textOf(page, "section[aria-labelledby=call-analysis] p")).join(" ")).toContain("No analysis");
    // The billing record and the latency stay.
    await page.waitForSelector("svg.latency-chart");
    const after = (await app.request("GET", `/v1/calls/${callId}?include=transcript,recording,analysis,latency`, { key: acct.key })).body;
    expect(after).toMatchObject({ transcript: [], recording_url: null, analysis: null, status: before.status, duration: before.duration, ended_at: before.ended_at });
    expect(after.latency).toEqual(before.latency);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
  it("shows a call's tool calls on its page: arguments, ok or the error, a long answer cut with the whole one under a disclosure", async () => {
    const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Orders", system_prompt: "You track orders.", voice_id: "flite-slt" } });
    const long = { items: Array.from({ length: 12 }, (_, i) => ({ sku: `SKU-${i}`, quantity: i + 1 })) };
    const call = await insertCallRow(app.parley.services.db, {
      account_id: acct.id,
      agent_id: agent.body.id,
      status: "completed",
      duration: 20,
      answered_at: "2026-01-01T00:00:01.000Z",
      ended_at: "2026-01-01T00:00:21.000Z",
      created_at: "2026-01-01T00:00:00.000Z",
      actions: JSON.stringify([
        { type: "tool_call", name: "order_status", arguments: { order_number: "4417" }, result: { ok: true, data: long } },
        { type: "tool_call", name: "order_status", arguments: { order_number: "9" }, result: { ok: false, error: "its URL answered HTTP 500" } },
        { type: "end_call", reason: "caller_goodbye" },
      ]),
    });
    const page = await browser.newPage();
    const problems = watchProblems(page);
    await page.setBypassCSP(true);
    await signIn(page, app.baseUrl, acct.key);
    await page.goto(`${app.baseUrl}/console/calls/${call.id}`);
    await page.waitForSelector("ol.tool-calls");
    const items = await textOf(page, "ol.tool-calls > li");
    expect(items).toHaveLength(2);
    expect(items[0]).toContain('order_status ok');
    expect(items[0]).toContain('{"order_number":"4417"}');
    expect(items[0]).toContain('{"items":[{"sku":"SKU-0","quantity":1}');
    expect(items[0]).toContain("…");
    expect(items[1]).toContain("order_status failed");
    expect(items[1]).toContain("its URL answered HTTP 500");
    // The whole answer, under its disclosure.
    const whole = await page.$eval("ol.tool-calls > li details pre", (pre) => JSON.parse(pre.textContent ?? ""));
    expect(whole).toEqual(long);
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);
});
