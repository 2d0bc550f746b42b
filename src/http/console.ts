import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { packageRoot } from "../../engine/index.js";
import { consoleVocabularyModule } from "./console-vocabulary.js";

/**
 * The web console at `/console`: static files from `console/` at the package root, plus the
 * ES module builds of preact, preact/hooks and htm, all read into memory once when the app is
 * built. Assets are served under `/console/assets/<version>/...`, where the version is a hash
 * of every file's content: long-cached and immutable, a new version is a new URL. The entry
 * (`index.html` with the import map) is `no-cache` and is served for every other path below
 * `/console` that looks like a client-side route (history routing). Requests are looked up in
 * the in-memory table and never joined into a file path, so no request reaches another file.
 */

export interface ConsoleOptions {
  /** The directory holding `index.html` and the console's modules (default: `console/` at the package root). */
  root?: string;
}

interface Asset {
  body: Buffer;
  type: string;
}

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".png": "image/png",
};

/** The browser builds of the UI library, as the import map names them. */
const VENDOR = [
  { specifier: "preact", resolve: "preact", file: "preact.module.js", as: "vendor/preact.module.js" },
  { specifier: "preact/hooks", resolve: "preact/hooks", file: "hooks.module.js", as: "vendor/preact-hooks.module.js" },
  { specifier: "htm", resolve: "htm", file: "htm.module.js", as: "vendor/htm.module.js" },
] as const;

/** The module of the API's vocabularies, written from the service's lists rather than kept in console/. */
const VOCABULARY_MODULE = "lib/api-values.js";

const IMMUTABLE = "public, max-age=31536000, immutable";
/** What a route or an asset's path may hold: no `%`, no `\`, no NUL; dot segments are refused on top. */
const SAFE_PATH = /^[A-Za-z0-9._~\-/]*$/;
const SAFE_HOST = /^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

function listFiles(dir: string, prefix = ""): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...listFiles(path.join(dir, entry.name), rel));
    else if (entry.isFile()) files.push(rel);
  }
  return files.sort();
}

function loadAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const rel of listFiles(root)) {
    if (rel === "index.html") continue;
    const type = CONTENT_TYPES[path.extname(rel)];
    if (type) assets.set(rel, { body: readFileSync(path.join(root, rel)), type });
  }
  assets.set(VOCABULARY_MODULE, { body: Buffer.from(consoleVocabularyModule()), type: CONTENT_TYPES[".js"]! });
  const require = createRequire(import.meta.url);
  for (const vendor of VENDOR) {
    const file = path.join(path.dirname(require.resolve(vendor.resolve)), vendor.file);
    assets.set(vendor.as, { body: readFileSync(file), type: CONTENT_TYPES[".js"]! });
  }
  return assets;
}

function sha256(data: string | Buffer, encoding: "hex" | "base64"): string {
  return createHash("sha256").update(data).digest(encoding);
}

/** The entry page with its asset URLs, and the hash of its one inline script (the import map) for the CSP. */
function renderEntry(template: string, assets: Map<string, Asset>, base: string): { html: string; importMapHash: string } {
  const importMap = JSON.stringify({ imports: Object.fromEntries(VENDOR.map((v) => [v.specifier, base + v.as])) });
  // Every module, fetched at once instead of import by import; not the worklets, which the audio thread loads itself.
  const preloads = [...VENDOR.map((v) => v.as), ...[...assets.keys()].filter((rel) => rel.endsWith(".js") && !rel.endsWith("-worklet.js"))]
    .map((rel) => `<link rel="modulepreload" href="${base}${rel}">`)
    .join("\n    ");
  const html = template.replaceAll("{{ASSETS}}", base).replace("{{IMPORT_MAP}}", importMap).replace("{{MODULE_PRELOADS}}", preloads);
  return { html, importMapHash: `sha256-${sha256(importMap, "base64")}` };
}

/** The headers every console response carries. */
function securityHeaders(res: Response, csp: string): void {
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  res.setHeader("Permissions-Policy", "microphone=(self), camera=(), geolocation=(), payment=(), usb=()");
}

function contentSecurityPolicy(importMapHash: string, host: string | undefined): string {
  // 'self' covers ws: and wss: to the same host in current browsers (CSP Level 3); the explicit
  // sources are for those that do not. The Host header is used only when it is a plain host[:port].
  const sockets = host && SAFE_HOST.test(host) ? ` ws://${host} wss://${host}` : "";
  return [
    "default-src 'none'",
    `script-src 'self' '${importMapHash}'`,
    "style-src 'self'",
    "img-src 'self'",
    "media-src 'self'",
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

function notFound(res: Response, csp: string): void {
  securityHeaders(res, csp);
  res.status(404).setHeader("Cache-Control", "no-store");
  res.type("text/plain; charset=utf-8").send("Not found");
}

/** The console's handler, to mount with `app.use("/console", consoleHandler())`. It needs no API key. */
export function consoleHandler(options: ConsoleOptions = {}): RequestHandler {
  const root = options.root ?? path.join(packageRoot(import.meta.url), "console");
  const entryFile = path.join(root, "index.html");
  if (!existsSync(entryFile)) {
    return (_req, res) => {
      res.status(404).type("text/plain; charset=utf-8").send(`The web console is not installed (${entryFile} is missing)`);
    };
  }
  const assets = loadAssets(root);
  const template = readFileSync(entryFile, "utf8");
  const version = sha256(
    Buffer.concat([Buffer.from(template), ...[...assets].flatMap(([rel, asset]) => [Buffer.from(`\0${rel}\0`), asset.body])]),
    "hex",
  ).slice(0, 16);
  const { html, importMapHash } = renderEntry(template, assets, `/console/assets/${version}/`);
  const entry = Buffer.from(html);
  const entryTag = `"${sha256(entry, "hex").slice(0, 16)}"`;

  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    const csp = contentSecurityPolicy(importMapHash, req.headers.host);
    const rawPath = req.path;
    const segments = rawPath.split("/").filter((s) => s !== "");
    if (!SAFE_PATH.test(rawPath) || segments.some((s) => s.startsWith("."))) return notFound(res, csp);

    if (segments[0] === "assets") {
      const asset = segments[1] === version ? assets.get(segments.slice(2).join("/")) : undefined;
      if (!asset) return notFound(res, csp);
      securityHeaders(res, csp);
      res.status(200).setHeader("Cache-Control", IMMUTABLE);
      res.type(asset.type).send(asset.body);
      return;
    }
    // A path naming a file that is not here is a 404, not the page; anything else is a client-side route.
    const last = segments.at(-1) ?? "";
    if (last.includes(".") && last !== "index.html") return notFound(res, csp);
    securityHeaders(res, csp);
    res.setHeader("Cache-Control", "no-cache");
    res.setHeader("ETag", entryTag);
    if (req.headers["if-none-match"] === entryTag) {
      res.status(304).end();
      return;
    }
    res.status(200).type("text/html; charset=utf-8").send(entry);
  };
}
