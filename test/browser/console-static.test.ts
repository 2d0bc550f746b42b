import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALL_OUTCOMES, ENDPOINTING_MODES } from "../../engine/index.js";
import { ACTIVE_CALL_STATUSES, CALL_DIRECTIONS, CALL_STATUSES } from "../../src/db/repositories/calls.js";
import { CONTACT_STATUSES } from "../../src/db/repositories/campaign-contacts.js";
import { CAMPAIGN_STATUSES } from "../../src/db/repositories/campaigns.js";
import { DELIVERY_STATUSES } from "../../src/db/repositories/deliveries.js";
import { WEBHOOK_STATUSES } from "../../src/db/repositories/webhooks.js";
import { consoleHandler } from "../../src/http/console.js";
import { AGENT_MODELS } from "../../src/services/agent-defaults.js";
import { EVENT_NAMES } from "../../src/services/event-names.js";
import { PERMISSIONS } from "../../src/services/permissions.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

/** The console's static serving over HTTP (no browser): caching, security headers, no way out of the console's files. */

const CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../console");

let app: TestApp;
let entry: { status: number; headers: Headers; body: string };
let assetBase: string;

/** A GET sent with the path exactly as given (fetch would normalise `..` and some escapes away). */
function rawGet(baseUrl: string, rawPath: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: rawPath, method: "GET" }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function get(urlPath: string, headers: Record<string, string> = {}) {
  const res = await fetch(app.baseUrl + urlPath, { headers });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

beforeAll(async () => {
  app = await startTestApp();
  entry = await get("/console/");
  assetBase = entry.body.match(/href="(\/console\/assets\/[0-9a-f]{16}\/)styles\.css"/)![1]!;
});

afterAll(async () => {
  await app?.close();
});

describe("the console's entry page", () => {
  it("is served without an API key, not cached without revalidation, with strict security headers", () => {
    expect(entry.status).toBe(200);
    expect(entry.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(entry.headers.get("cache-control")).toBe("no-cache");
    expect(entry.headers.get("x-frame-options")).toBe("DENY");
    expect(entry.headers.get("referrer-policy")).toBe("no-referrer");
    expect(entry.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = Object.fromEntries(
      entry.headers
        .get("content-security-policy")!
        .split(";")
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...sources]) => [name, sources]),
    );
    const host = new URL(app.baseUrl).host;
    // The one inline script is the import map, allowed by its hash; no other inline script or style.
    const importMap = entry.body.match(/<script type="importmap">([^<]*)<\/script>/)![1]!;
    const hash = `'sha256-${createHash("sha256").update(importMap).digest("base64")}'`;
    expect(csp).toEqual({
      "default-src": ["'none'"],
      "script-src": ["'self'", hash],
      "style-src": ["'self'"],
      "img-src": ["'self'"],
      "media-src": ["'self'"],
      "connect-src": ["'self'", `ws://${host}`, `wss://${host}`],
      "base-uri": ["'none'"],
      "form-action": ["'self'"],
      "frame-ancestors": ["'none'"],
    });
    expect(entry.body.match(/<script/g)).toHaveLength(2);
    expect(entry.body).toContain(`<script type="module" src="${assetBase}app.js"></script>`);
    expect(JSON.parse(importMap)).toEqual({
      imports: { preact: `${assetBase}vendor/preact.module.js`, "preact/hooks": `${assetBase}vendor/preact-hooks.module.js`, htm: `${assetBase}vendor/htm.module.js` },
    });
    expect(entry.body).not.toMatch(/style=|<style/);
  });

  it("answers every route below /console with the same page (history routing); the API still needs its key", async () => {
    for (const route of ["/console", "/console/agents", "/console/calls/call_abc123", "/console/agents/agent_x/talk", "/console/no/such/page", "/console/index.html"]) {
      const res = await get(route);
      expect(res.status, route).toBe(200);
      expect(res.body, route).toBe(entry.body);
      expect(res.headers.get("cache-control"), route).toBe("no-cache");
    }
    expect((await get("/v1/agents")).status).toBe(401);
    const res = await fetch(`${app.baseUrl}/console/agents`, { method: "POST" });
    expect(res.status).toBe(404);
  });

  it("revalidates with its ETag", async () => {
    const again = await get("/console/", { "if-none-match": entry.headers.get("etag")! });
    expect(again.status).toBe(304);
  });
});

describe("the console's assets", () => {
  it("are immutable under a versioned path, with their types; the UI library is preact and htm from node_modules", async () => {
    const expected: Array<[string, string, string]> = [
      ["app.js", "text/javascript; charset=utf-8", path.join(CONSOLE_DIR, "app.js")],
      ["styles.css", "text/css; charset=utf-8", path.join(CONSOLE_DIR, "styles.css")],
      ["audio/capture-worklet.js", "text/javascript; charset=utf-8", path.join(CONSOLE_DIR, "audio/capture-worklet.js")],
      ["favicon.svg", "image/svg+xml", path.join(CONSOLE_DIR, "favicon.svg")],
      ["vendor/preact.module.js", "text/javascript; charset=utf-8", path.resolve(CONSOLE_DIR, "../node_modules/preact/dist/preact.module.js")],
      ["vendor/preact-hooks.module.js", "text/javascript; charset=utf-8", path.resolve(CONSOLE_DIR, "../node_modules/preact/hooks/dist/hooks.module.js")],
      ["vendor/htm.module.js", "text/javascript; charset=utf-8", path.resolve(CONSOLE_DIR, "../node_modules/htm/dist/htm.module.js")],
    ];
    for (const [asset, type, file] of expected) {
      const res = await get(assetBase + asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("content-type"), asset).toBe(type);
      expect(res.headers.get("cache-control"), asset).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("x-content-type-options"), asset).toBe("nosniff");
      expect(res.body, asset).toBe(readFileSync(file, "utf8"));
    }
    // Every module the page preloads is there.
    for (const [, href] of entry.body.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)) expect((await get(href!)).status, href).toBe(200);
  });

  it("are 404 under another version, or when they do not exist (never the page)", async () => {
    expect((await get("/console/assets/0123456789abcdef/app.js")).status).toBe(404);
    expect((await get(`${assetBase}nope.js`)).status).toBe(404);
    expect((await get(`${assetBase}index.html`)).status).toBe(404);
    expect((await get("/console/app.js")).status).toBe(404);
    expect((await get("/console/favicon.ico")).status).toBe(404);
  });

  it("get a new version when a file changes, and the old version's URLs stop", async () => {
    const copy = mkdtempSync(path.join(os.tmpdir(), "parley-console-copy-"));
    try {
      cpSync(CONSOLE_DIR, copy, { recursive: true });
      const serve = async () => {
        const server = express().use("/console", consoleHandler({ root: copy })).listen(0, "127.0.0.1");
        await new Promise((resolve) => server.once("listening", resolve));
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const html = await (await fetch(`${base}/console/`)).text();
        return { server, base, prefix: html.match(/(\/console\/assets\/[0-9a-f]{16}\/)app\.js/)![1]! };
      };
      const before = await serve();
      before.server.close();
      writeFileSync(path.join(copy, "styles.css"), `${readFileSync(path.join(copy, "styles.css"), "utf8")}\n/* changed */\n`);
      const after = await serve();
      try {
        expect(after.prefix).not.toBe(before.prefix);
        expect((await fetch(`${after.base}${after.prefix}styles.css`)).status).toBe(200);
        expect((await fetch(`${after.base}${before.prefix}styles.css`)).status).toBe(404);
        expect(await (await fetch(`${after.base}${after.prefix}styles.css`)).text()).toContain("/* changed */");
      } finally {
        after.server.close();
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});

describe("paths that try to leave the console", () => {
  it("are 404, plain or encoded, and never show another file", async () => {
    const packageJson = readFileSync(path.resolve(CONSOLE_DIR, "../package.json"), "utf8");
    const attempts = [
      "/console/../package.json",
      "/console/./../package.json",
      "/console/%2e%2e/package.json",
      "/console/%2E%2E/%2E%2E/package.json",
      "/console/..%2fpackage.json",
      "/console/..%2Fpackage.json",
      "/console/..%5cpackage.json",
      "/console/..\\package.json",
      "/console/%252e%252e/package.json",
      "/console/.%2e/package.json",
      "/console/assets/../../package.json",
      `${assetBase}../../../package.json`,
      `${assetBase}..%2f..%2f..%2fpackage.json`,
      `${assetBase}%2e%2e/%2e%2e/%2e%2e/package.json`,
      `${assetBase}vendor/..%2f..%2f..%2f..%2fpackage.json`,
      `${assetBase}vendor/../../../../node_modules/preact/package.json`,
      `${assetBase}app.js%00.html`,
      `${assetBase}.gitignore`,
      "/console/.env",
      "/console/%00",
    ];
    for (const attempt of attempts) {
      const res = await rawGet(app.baseUrl, attempt);
      expect(res.status, attempt).toBe(404);
      expect(res.body, attempt).not.toContain('"name": "parley"');
      expect(res.body, attempt).not.toBe(packageJson);
    }
  });
});

describe("the console's lists of the API's values", () => {
  it("are the service's own, as the console loads them", async () => {
    const served = await get(`${assetBase}lib/api-values.js`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toContain("text/javascript");
    const values = await import(`data:text/javascript,${encodeURIComponent(served.body)}`);
    expect(values.CALL_STATUSES).toEqual([...CALL_STATUSES]);
    expect(values.LIVE_CALL_STATUSES).toEqual([...ACTIVE_CALL_STATUSES]);
    expect(values.CALL_DIRECTIONS).toEqual([...CALL_DIRECTIONS]);
    expect(values.CALL_OUTCOMES).toEqual([...CALL_OUTCOMES]);
    expect(values.EVENT_NAMES).toEqual([...EVENT_NAMES]);
    expect(values.AGENT_MODELS).toEqual([...AGENT_MODELS]);
    expect(values.ENDPOINTING_MODES).toEqual([...ENDPOINTING_MODES]);
    expect(values.WEBHOOK_STATUSES).toEqual([...WEBHOOK_STATUSES]);
    expect(values.DELIVERY_STATUSES).toEqual([...DELIVERY_STATUSES]);
    expect(values.CAMPAIGN_STATUSES).toEqual([...CAMPAIGN_STATUSES]);
    expect(values.CONTACT_STATUSES).toEqual([...CONTACT_STATUSES]);
    expect(values.PERMISSIONS).toEqual([...PERMISSIONS]);
  });
});
