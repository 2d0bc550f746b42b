import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { launchFirefox, signIn, watchProblems } from "./chromium.js";

/**
 * The console in Firefox: ES modules with an import map under the console's CSP, history
 * routing, forms and the API's errors. Browser calls are not run here: headless Firefox
 * without a sound server never starts an AudioContext, so they are tested in Chromium only.
 */

// Browser globals, for the functions that run in the page (the project compiles without the DOM library).
declare const document: any;
declare const location: any;

let app: TestApp;
let acct: TestAccount;
let browser: Browser;

beforeAll(async () => {
  [app, browser] = await Promise.all([startTestApp(), launchFirefox()]);
  acct = await app.account();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe("the web console in Firefox", () => {
  it("signs in, creates an agent through its form (the API's error shown by its field), and opens every page without an error", async () => {
    const page = await browser.newPage();
    const problems = watchProblems(page);
    await signIn(page, app.baseUrl, acct.key);

    await page.goto(`${app.baseUrl}/console/agents/new`);
    await page.waitForFunction(() => document.querySelector("#agent-voice")?.value.startsWith("flite-"));
    await page.type("#agent-name", "Front desk");
    await page.type("#agent-system-prompt", "You answer questions for Acme Dental.");
    await page.type("#agent-temperature", "5");
    await page.click("form.agent-form button[type=submit]");
    await page.waitForSelector("#agent-temperature-error");
    expect(await page.$eval("#agent-temperature-error", (n) => n.textContent)).toBe("must be from 0.0 to 1.0");
    await page.$eval("#agent-temperature", (input: any) => (input.value = ""));
    await page.type("#agent-temperature", "0.4");
    await page.click("form.agent-form button[type=submit]");
    await page.waitForFunction(() => /\/console\/agents\/agent_[0-9A-Za-z]+$/.test(location.pathname));
    // The agent's page has loaded (its stats read) before the test navigates on: leaving earlier
    // aborts that read, which would count as a failed request.
    await page.waitForFunction(() => document.querySelector("dl.stats") !== null);
    const agentId = page.url().split("/").pop()!;
    expect((await app.request("GET", `/v1/agents/${agentId}`, { key: acct.key })).body).toMatchObject({ name: "Front desk", temperature: 0.4 });

    for (const [path, heading] of [
      [`/console/agents/${agentId}/talk`, "Front desk"],
      ["/console/calls", "Calls"],
      ["/console/phone-numbers", "Phone numbers"],
      ["/console/webhooks", "Webhooks"],
      ["/console/campaigns", "Campaigns"],
      ["/console/account", "Account"],
    ]) {
      await page.goto(`${app.baseUrl}${path}`);
      await page.waitForFunction((h: string) => document.querySelector("h1")?.textContent?.includes(h), {}, heading!);
      // A page's heading can show before its lists are read; leaving then aborts those reads (counted as failures).
      await page.waitForNetworkIdle({ idleTime: 250, timeout: 15_000 });
    }
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
