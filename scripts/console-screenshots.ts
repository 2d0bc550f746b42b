/**
 * `npm run screenshots` (after `npm run build`): PNGs of the web console's main pages in
 * docs/screenshots/. The real service runs in-process on a temporary data directory (the
 * embedded engine, the simulator carrier, loopback only); demo data is made through the API:
 * agents, a number, simulator calls, a browser call from Chromium's fake microphone, webhooks
 * on a local receiver, campaigns. Then Debian's Chromium visits each page at 1280x800.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { encodeWav, parseWav } from "../engine/audio/wav.js";
import { loadConfig } from "../src/config.js";
import { packageRoot } from "../engine/index.js";
import { startParley, type Parley } from "../src/main.js";
import { answerHelp } from "../src/cli/help.js";

const ROOT = packageRoot(import.meta.url);
const OUT = path.join(ROOT, "docs/screenshots");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const VIEWPORT = { width: 1280, height: 800 };
const GREETING = "Hello, thanks for calling Acme Dental. How can I help you today?";
const ANSWER = "We are open from nine to five, Monday to Friday.";

// Browser globals, for the functions that run in the page (the project compiles without the DOM library).
declare const document: any;
declare const history: any;
declare function dispatchEvent(event: unknown): boolean;
declare const PopStateEvent: any;

const log = (message: string) => console.log(`[screenshots] ${message}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Api {
  (method: string, urlPath: string, body?: unknown): Promise<any>;
}

function apiClient(baseUrl: string, key: string): Api {
  return async (method, urlPath, body) => {
    const res = await fetch(baseUrl + urlPath, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
}

/** A receiver for the demo webhooks: `/ok` answers 200, `/broken` 500. */
async function startReceiver(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(req.url === "/broken" ? 500 : 200, { "content-type": "text/plain" }).end(req.url === "/broken" ? "database down" : "ok"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

/** Demo data through the API; returns the ids the pages show. */
async function makeDemoData(parley: Parley, api: Api, receiverUrl: string): Promise<{ agentId: string; callId: string }> {
  const number = await api("POST", "/v1/phone-numbers", { phone_number: "+14155550100", country: "US", friendly_name: "Front desk line", region: "CA" });
  await parley.services.phoneNumbers.approve(number.id);
  const receptionist = await api("POST", "/v1/agents", {
    name: "Receptionist",
    system_prompt: "You answer questions and book appointments for Acme Dental.",
    voice_id: "flite-slt",
    first_message: GREETING,
    metadata: { business_name: "Acme Dental", faq: [{ question: "What are your opening hours?", answer: ANSWER }] },
    analysis_fields: [{ name: "insurer", type: "enum", description: "the caller's insurance company", enum: ["delta", "cigna", "other"] }],
  });
  const reminders = await api("POST", "/v1/agents", {
    name: "Reminder desk",
    system_prompt: "You call customers to confirm their appointments.",
    voice_id: "flite-rms",
    first_message: "Hi {{customer_name}}, this is Acme Dental calling about your appointment.",
    reminder_call: true,
    endpointing_mode: "fixed",
  });
  const old = await api("POST", "/v1/agents", { name: "Holiday line (old)", system_prompt: "Closed for the holidays.", voice_id: "flite-awb" });
  await api("PATCH", `/v1/agents/${old.id}`, { status: "inactive" });
  await api("PATCH", `/v1/phone-numbers/${number.id}`, { default_agent_id: receptionist.id });
  log("agents and a number made");

  await api("POST", "/v1/webhooks", { url: `${receiverUrl}/ok`, events: ["*"], description: "CRM sync" });
  await api("POST", "/v1/webhooks", { url: `${receiverUrl}/broken`, events: ["call.completed", "call.failed"], description: "Reporting (down)" });

  // Simulator calls: two conversations (the callee asks for the opening hours, says goodbye), a busy line, no answer.
  const calls: any[] = [];
  for (const to of ["+14155550123", "+14155550124", "+15005550001", "+15005550002"]) {
    calls.push(await api("POST", "/v1/calls", { phone_number: to, agent_id: receptionist.id, context: { customer_name: "Ada" }, metadata: { crm_id: to.slice(-3) } }));
  }
  log(`${calls.length} simulator calls placed; waiting for them to end`);
  await waitFor(
    "the simulator calls",
    () => Promise.all(calls.map((c) => api("GET", `/v1/calls/${c.id}?include=analysis`))),
    (read) => read.every((c) => !["queued", "ringing", "in_progress"].includes(c.status) && (c.answered_at === null || c.analysis !== null)),
  );

  await api("POST", "/v1/campaigns", {
    name: "Spring check-up reminders",
    agent_id: receptionist.id,
    contacts: [1001, 1002, 1003, 1004, 1005, 1006].map((n) => ({ phone: `+1500555${n}`, context: { customer_name: `Customer ${n}` } })).concat([{ phone: "+15005553001", context: { customer_name: "Busy" } }]),
    settings: { max_concurrent: 2, retry_no_answer: true, max_attempts: 2, retry_delay_minutes: 0, calling_hours: { start: "00:00", end: "24:00" }, timezone: "America/Los_Angeles" },
  });
  const later = await api("POST", "/v1/campaigns", {
    name: "Recall list (next week)",
    agent_id: reminders.id,
    contacts: [2001, 2002, 2003].map((n) => ({ phone: `+1500555${n}` })),
    settings: { schedule: new Date(Date.now() + 7 * 86_400_000).toISOString() },
  });
  await api("POST", `/v1/campaigns/${later.id}/pause`);
  log("campaigns made; waiting for the first to finish");
  await waitFor("the campaign", () => api("GET", "/v1/campaigns?status=completed"), (page) => page.total >= 1);
  return { agentId: receptionist.id, callId: calls[0].id };
}

/** The fake microphone: silence while the greeting plays, then "what are your opening hours". */
function microphoneWav(dir: string): string {
  const question = parseWav(readFileSync(path.join(ROOT, "fixtures/audio/opening-hours.16k.wav"))).samples;
  const samples = new Int16Array(16000 * 8 + question.length + 16000 * 8);
  samples.set(question, 16000 * 8);
  const file = path.join(dir, "caller.wav");
  writeFileSync(file, encodeWav({ sampleRate: 16000, channels: 1, samples }));
  return file;
}

async function shoot(page: Page, name: string, fullPage = false): Promise<void> {
  await page.evaluate(() => document.activeElement?.blur());
  await sleep(300);
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file as `${string}.png`, fullPage });
  log(`wrote docs/screenshots/${name}.png`);
}

/** Client-side navigation, as a click on a link does. */
async function visit(page: Page, route: string, ready: string): Promise<void> {
  await page.evaluate((url: string) => {
    history.pushState(null, "", url);
    dispatchEvent(new PopStateEvent("popstate"));
  }, `/console${route}`);
  await page.waitForSelector(ready, { timeout: 20_000 });
}

async function takeScreenshots(browser: Browser, baseUrl: string, key: string, ids: { agentId: string; callId: string }): Promise<void> {
  const page = await browser.newPage();
  await page.setViewport(VIEWPORT);
  page.on("pageerror", (err) => log(`page error: ${(err as Error).message}`));
  await page.goto(`${baseUrl}/console/`);
  await page.waitForSelector("#api-key");
  await shoot(page, "sign-in");
  await page.type("#api-key", key);
  await page.click("button[type=submit]");
  await page.waitForSelector("table.list");
  await shoot(page, "agents");

  // A browser call: the fake microphone asks for the opening hours.
  await visit(page, `/agents/${ids.agentId}`, "#agent-name");
  await shoot(page, "agent-edit");
  const [talk] = await page.$$("xpath/.//button[normalize-space()='Talk']");
  await talk!.click();
  await page.waitForFunction((answer: string) => [...document.querySelectorAll(".live-transcript .line-agent .what")].some((n: any) => n.textContent?.startsWith(answer)), { timeout: 60_000 }, ANSWER);
  await sleep(2500);
  await shoot(page, "talk");
  const [hangUp] = await page.$$("xpath/.//button[normalize-space()='Hang up']");
  await hangUp!.click();
  await page.waitForSelector("xpath/.//a[normalize-space()=\"Open the call's page\"]", { timeout: 20_000 });

  await visit(page, "/calls", "table.list");
  await shoot(page, "calls");
  await visit(page, `/calls/${ids.callId}`, "svg.latency-chart g.turn");
  await page.waitForSelector(".events code", { timeout: 20_000 });
  await page.waitForFunction(() => (document.querySelector("audio")?.duration ?? 0) > 0);
  await shoot(page, "call", true);
  await visit(page, "/phone-numbers", "table.list");
  await shoot(page, "phone-numbers");
  await visit(page, "/webhooks", "table.list");
  await shoot(page, "webhooks");
  await visit(page, "/campaigns", "li.campaign progress");
  await shoot(page, "campaigns");
  await visit(page, "/account", "ul.permissions");
  await page.waitForSelector("table.list");
  await shoot(page, "account");

  // A phone's view of the call page.
  await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1, isMobile: true, hasTouch: true });
  await visit(page, `/calls/${ids.callId}`, "svg.latency-chart g.turn");
  await shoot(page, "call-phone");
  await page.close();
}

export async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-screenshots-"));
  const config = loadConfig({
    env: { PARLEY_ENGINE: "1", PARLEY_SIP_PORT: "0", PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1" },
    cwd: dataDir,
    overrides: { port: 0, host: "127.0.0.1", dataDir, logLevel: "silent" },
  });
  log(`starting the service on ${dataDir}`);
  const parley = await startParley(config, pino({ level: "silent" }));
  const baseUrl = `http://127.0.0.1:${parley.http.port}`;
  const receiver = await startReceiver();
  let browser: Browser | undefined;
  try {
    const account = await parley.services.accounts.create({ name: "Acme Dental", plan: "pro", credits: 500 });
    const { key } = await parley.services.apiKeys.create(account.id, "console demo", ["*"]);
    const api = apiClient(baseUrl, key);
    const ids = await makeDemoData(parley, api, receiver.url);
    log("launching Chromium");
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--autoplay-policy=no-user-gesture-required",
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        `--use-file-for-fake-audio-capture=${microphoneWav(dataDir)}%noloop`,
        "--force-color-profile=srgb",
        "--hide-scrollbars",
      ],
    });
    await takeScreenshots(browser, baseUrl, key, ids);
    log(`done: ${OUT}`);
  } finally {
    await browser?.close();
    receiver.server.close();
    await parley.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const USAGE = `npm run screenshots   (after npm run build)

Runs the service on a temporary data directory with demo data made through the API, and
writes PNGs of the web console's main pages to docs/screenshots/ with Debian's Chromium.`;

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  answerHelp(process.argv.slice(2), USAGE);
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
