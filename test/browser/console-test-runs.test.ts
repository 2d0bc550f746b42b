import type { Browser, HTTPRequest, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StartedTestRun } from "../../src/services/test-runs.js";
import { recordTestRuns } from "../helpers/recorded-test-runs.js";
import type { ScenarioResult } from "../../src/services/test-run-scenario.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { accessibilityViolations } from "./accessibility.js";
import { launchChromium, signIn, watchProblems } from "./chromium.js";

/**
 * An agent's Tests tab in Chromium (issue 32): the scenario editor (a JSON mistake shown before
 * any request, the API's 400 by its field, the text kept across a reload), Run, the run followed
 * while it goes and its results once it ends: failed expectations first with expected and seen,
 * the transcript as text. The runs are carried out by a stand-in the test drives (as in
 * test/api/test-runs.test.ts): no engine, no recognizer to race.
 */

// Browser globals, for the functions that run in the page (the project compiles without the DOM library).
declare const document: any;
declare const location: any;
declare const localStorage: any;

let app: TestApp;
let acct: TestAccount;
let agentId: string;
let browser: Browser;
let started: StartedTestRun[];

// Server text that would be markup if the page rendered it as HTML.
/**
 * How long to wait for what the page sends: expect.poll's default (1 s) is the page's own
 * polling period (agent-tests.js POLL_MS), so a second read of a running run could not be
 * counted in time on a busy machine (a CI run failed so).
 */
const POLL_WAIT_MS = 10_000;
const MARKUP = `<img src=x onerror="document.body.dataset.injected='yes'"> <b>bold</b>`;

const passed = (name: string): ScenarioResult => ({
  name,
  status: "passed",
  error: null,
  transcript: [
    { role: "agent", content: "Hello, Acme Dental.", timestamp: 0.2 },
    { role: "user", content: "what are your opening hours", timestamp: 2.5 },
    { role: "agent", content: "We are open nine to five.", timestamp: 4.1 },
  ],
  turns: [{ line: 0, voice_to_voice_ms: 640 }],
  outcome: "information_provided",
  expectations: [{ name: "must_say: open", passed: true, expected: "open", seen: "open" }],
});

const failed = (name: string): ScenarioResult => ({
  name,
  status: "failed",
  error: null,
  transcript: [
    { role: "agent", content: "Hello, Acme Dental.", timestamp: 0.2 },
    { role: "user", content: "can i book a cleaning", timestamp: 2.4 },
    { role: "agent", content: MARKUP, timestamp: 5 },
  ],
  turns: [{ line: 0, voice_to_voice_ms: 910 }, { line: 1, voice_to_voice_ms: null }],
  outcome: "no_action",
  expectations: [
    { name: "max_voice_to_voice_ms", passed: true, expected: 8000, seen: 910 },
    { name: "must_say: is booked for", passed: false, expected: "is booked for", seen: null },
  ],
});

beforeAll(async () => {
  [app, browser] = await Promise.all([startTestApp(), launchChromium()]);
  started = recordTestRuns(app);
  acct = await app.account();
  agentId = (await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: "You answer calls.", voice_id: "flite-slt" } })).body.id;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

/** Replaces a field's text as typing would (select all, type). */
async function typeInto(page: Page, selector: string, text: string): Promise<void> {
  await page.click(selector);
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyA");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  await page.type(selector, text);
}

const textOf = (page: Page, selector: string) => page.$$eval(selector, (nodes) => nodes.map((n) => (n.textContent ?? "").replace(/\s+/g, " ").trim()));

/** The page's requests to the test-run API, as `METHOD path`. */
function watchTestRunRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on("request", (request: HTTPRequest) => {
    const url = new URL(request.url());
    if (url.pathname.includes("/test-runs")) seen.push(`${request.method()} ${url.pathname}`);
  });
  return seen;
}

async function clickButton(page: Page, text: string): Promise<void> {
  const [button] = await page.$$(`xpath/.//button[normalize-space()='${text}']`);
  await button!.click();
}

/** Waits long enough for several polls (a second apart) and gives the requests seen meanwhile. */
async function requestsOver(seen: string[], ms: number): Promise<string[]> {
  const before = seen.length;
  await new Promise((resolve) => setTimeout(resolve, ms));
  return seen.slice(before);
}

describe("the console's Tests tab", () => {
  it("edits scenarios, runs them, follows the run and shows what failed, with the transcript as text", async () => {
    const page = await browser.newPage();
    const problems = watchProblems(page);
    const requests = watchTestRunRequests(page);
    // The accessibility audit's script is injected: the console's CSP rightly refuses it otherwise.
    await page.setBypassCSP(true);
    await signIn(page, app.baseUrl, acct.key);
    await page.goto(`${app.baseUrl}/console/agents/${agentId}`);
    await page.waitForSelector("#agent-name");
    expect(await accessibilityViolations(page)).toEqual([]);

    // The tabs work from the keyboard: the arrow key moves to Tests and selects it.
    await page.focus("#agent-tab-settings");
    await page.keyboard.press("ArrowRight");
    await page.waitForSelector("#test-scenarios");
    expect(await page.$eval("#agent-tab-tests", (tab) => [tab.getAttribute("aria-selected"), tab === document.activeElement])).toEqual(["true", true]);
    expect(await page.$("#agent-name")).toBeNull();
    expect(page.url()).toBe(`${app.baseUrl}/console/agents/${agentId}?tab=tests`);
    await page.waitForFunction(() => document.body.textContent.includes("No runs yet."));

    // The first time, an example: one scenario, two lines, one phrase to say.
    const example = JSON.parse(await page.$eval("#test-scenarios", (t) => t.value));
    expect(example.scenarios).toHaveLength(1);
    expect(example.scenarios[0].caller.lines).toHaveLength(2);
    expect(example.scenarios[0].expect.must_say).toHaveLength(1);

    // JSON that does not parse is shown by the editor; nothing is sent.
    await typeInto(page, "#test-scenarios", '{"scenarios": [');
    await clickButton(page, "Run");
    await page.waitForSelector("#test-scenarios-error");
    expect((await textOf(page, "#test-scenarios-error"))[0]).toContain("is not valid JSON");
    expect(await page.$eval("#test-scenarios", (t) => t.getAttribute("aria-invalid"))).toBe("true");
    expect(requests.filter((r) => r.startsWith("POST"))).toEqual([]);

    // The API's 400 names the field, shown by the editor.
    const noLines = JSON.stringify({ scenarios: [{ name: "asks nothing", caller: { lines: [] } }] });
    await typeInto(page, "#test-scenarios", noLines);
    await clickButton(page, "Run");
    await page.waitForFunction(() => document.querySelector("#test-scenarios-error")?.textContent.includes("scenarios[0].caller.lines"));
    expect(requests.filter((r) => r.startsWith("POST"))).toEqual([`POST /v1/agents/${agentId}/test-runs`]);
    expect(started).toHaveLength(0);

    // A reload finds the tab and the text as they were (kept per agent in this browser).
    await page.reload();
    await page.waitForSelector("#test-scenarios");
    expect(await page.$eval("#test-scenarios", (t) => t.value)).toBe(noLines);
    expect(await page.evaluate((id: string) => localStorage.getItem(`parley.testScenarios.${id}`), agentId)).toBe(noLines);

    // Run: the carrier gets the scenarios, the page shows the run going.
    const body = {
      scenarios: [
        { name: "asks the hours", caller: { lines: ["what are your opening hours", "goodbye"] }, expect: { must_say: ["open"] } },
        { name: "books a cleaning", caller: { lines: ["can i book a cleaning", "goodbye"] }, expect: { must_say: ["is booked for"], max_voice_to_voice_ms: 8000 } },
      ],
    };
    await typeInto(page, "#test-scenarios", JSON.stringify(body));
    await clickButton(page, "Run");
    await expect.poll(() => started.length, { timeout: POLL_WAIT_MS }).toBe(1);
    const run = started[0]!;
    expect(run).toMatchObject({ agentId, scenarios: [{ name: "asks the hours" }, { name: "books a cleaning" }] });
    await page.waitForFunction(() => document.querySelector(".run-progress")?.textContent.startsWith("Running"));
    expect(await textOf(page, "#test-run-heading")).toEqual([`Run ${run.id}`]);
    expect(await textOf(page, `tr[data-run='${run.id}'] .badge`)).toEqual(["running"]);
    expect(await page.$eval("#test-scenarios", (t) => t.getAttribute("aria-invalid"))).toBeNull();

    // Progress shows while it runs (the page reads the run again every second)...
    await app.parley.services.testRuns.progress(run.id, [passed("asks the hours"), { ...failed("books a cleaning"), status: "running", expectations: [], transcript: null, turns: [] }]);
    await page.waitForFunction(() => document.querySelector(".run-progress")?.textContent === "Running: 1 passed, 0 failed, 1 to go.");
    expect(await textOf(page, ".scenario h3")).toEqual(["asks the hours passed", "books a cleaning running"]);

    // ...and its end: the failed expectation first, with what was expected and what was seen.
    await app.parley.services.testRuns.finish(run, [passed("asks the hours"), failed("books a cleaning")]);
    await page.waitForFunction(() => document.querySelector(".run-progress")?.textContent === "Ended failed: 1 passed, 1 failed.");
    expect(await textOf(page, `tr[data-run='${run.id}'] .badge`)).toEqual(["failed"]);
    expect(await textOf(page, `tr[data-run='${run.id}'] .run-summary`)).toEqual(["1 passed, 1 failed"]);
    const rows = await page.$$eval(".scenario-failed table.expectations tbody tr", (trs) =>
      trs.map((tr: any) => ({ failed: tr.classList.contains("expectation-failed"), cells: [...tr.children].map((c: any) => c.textContent.trim()) })),
    );
    expect(rows).toEqual([
      { failed: true, cells: ["must_say: is booked for", "✗ failed", '"is booked for"', "none"] },
      { failed: false, cells: ["max_voice_to_voice_ms", "✓ passed", "8000", "910"] },
    ]);
    const turns = await page.$$eval(".scenario-failed table.turns tbody tr", (trs) => trs.map((tr: any) => [...tr.children].map((c: any) => c.textContent.trim())));
    expect(turns).toEqual([["1", "910 ms"], ["2", "no answer"]]);
    expect(await textOf(page, ".scenario-failed")).toEqual([expect.stringContaining("Outcome: no action")]);

    // The transcript, each line's speaker and words; the server's text is text, never markup.
    const lines = await page.$$eval(".scenario-failed .test-transcript li", (items) => items.map((li: any) => [li.className, li.querySelector(".who").textContent, li.querySelector(".what").textContent]));
    expect(lines).toEqual([
      ["line line-agent", "Agent", "Hello, Acme Dental."],
      ["line line-user", "Caller", "can i book a cleaning"],
      ["line line-agent", "Agent", MARKUP],
    ]);
    expect(await page.$$(".test-run img, .test-run b")).toHaveLength(0);
    expect(await page.evaluate(() => document.body.dataset.injected ?? null)).toBeNull();

    // Once it has ended the page stops reading it.
    expect(await requestsOver(requests, 2500)).toEqual([]);

    expect(await accessibilityViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("stops following a running run when the page is left: no timer is left behind (after the test above)", async () => {
    const page = await browser.newPage();
    const problems = watchProblems(page);
    const requests = watchTestRunRequests(page);
    await signIn(page, app.baseUrl, acct.key);
    await page.goto(`${app.baseUrl}/console/agents/${agentId}?tab=tests`);
    await page.waitForSelector("#test-scenarios");
    // The text the first test left in this browser's storage for this agent.
    expect(JSON.parse(await page.$eval("#test-scenarios", (t) => t.value)).scenarios).toHaveLength(2);
    await clickButton(page, "Run");
    await expect.poll(() => started.length, { timeout: POLL_WAIT_MS }).toBe(2);
    const run = started[1]!;
    await page.waitForFunction(() => document.querySelector(".run-progress")?.textContent.startsWith("Running"));
    // It is being read again while it runs...
    const path = `GET /v1/agents/${agentId}/test-runs/${run.id}`;
    await expect.poll(() => requests.filter((r) => r === path).length, { timeout: POLL_WAIT_MS }).toBeGreaterThanOrEqual(2);

    // ...and no longer once the page is left for another (the run still going).
    await page.click("nav a[href='/console/agents']");
    await page.waitForFunction(() => location.pathname === "/console/agents" && document.querySelector("h1")?.textContent === "Agents");
    expect(await requestsOver(requests, 2500)).toEqual([]);
    expect((await app.request("GET", `/v1/agents/${agentId}/test-runs/${run.id}`, { key: acct.key })).body.status).toBe("running");

    await app.parley.services.testRuns.finish(run, [passed("asks the hours"), passed("books a cleaning")]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
