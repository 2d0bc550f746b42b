import puppeteer, { type Browser, type Page } from "puppeteer-core";

// A browser global, for the function that runs in the page (the project compiles without the DOM library).
declare const document: any;

/** Debian's Chromium and Firefox ESR (`npm run setup` installs both). */
export const CHROMIUM = "/usr/bin/chromium";
export const FIREFOX = "/usr/bin/firefox-esr";

/**
 * A headless Chromium. `fakeMicrophone`: a 16-bit PCM WAV file the fake capture device plays
 * once (then silence), granted without a prompt; audio may play without a user gesture.
 */
export async function launchChromium(options: { fakeMicrophone?: string } = {}): Promise<Browser> {
  const args = ["--no-sandbox", "--disable-dev-shm-usage", "--autoplay-policy=no-user-gesture-required"];
  if (options.fakeMicrophone) {
    args.push("--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", `--use-file-for-fake-audio-capture=${options.fakeMicrophone}%noloop`);
  }
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, args });
}

/**
 * A headless Firefox, driven over WebDriver BiDi. Its fake microphone plays a tone (Firefox
 * cannot play a file), granted without a prompt; audio may play without a user gesture.
 */
export async function launchFirefox(): Promise<Browser> {
  return puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    extraPrefsFirefox: {
      "media.navigator.streams.fake": true,
      "media.navigator.permission.disabled": true,
      "media.autoplay.default": 0,
    },
  });
}

/**
 * What went wrong in the page: uncaught errors, console errors (a Content-Security-Policy
 * violation is one), failed requests, error answers to anything but the API.
 */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (err) => problems.push(`page error: ${(err as Error).message}`));
  page.on("console", (message) => {
    // The API's own error answers (a 400 for a bad field) are logged by Chromium too: they are expected.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource: the server responded")) problems.push(`console error: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() >= 400 && !new URL(response.url()).pathname.startsWith("/v1/")) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  page.on("requestfailed", (request) => {
    // Aborted media range requests (the player seeking) are not failures.
    if (request.failure()?.errorText === "net::ERR_ABORTED" && request.resourceType() === "media") return;
    problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  return problems;
}

/** Signs in on the console's page with `key` and waits for the first page after it (the agent list). */
export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.waitForSelector("#api-key");
  await page.type("#api-key", key);
  await page.click("button[type=submit]");
  await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Agents");
}
