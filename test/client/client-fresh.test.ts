import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDocument, defaultClientDir, GENERATED_FILES, renderClientFiles, runGenerateClient, staleFiles, type GeneratedFile } from "../../scripts/generate-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// The committed client (clients/typescript/openapi.json and src/schema.ts) must be what the
// generator makes from the current route specs: a change to the API without
// `npm run build && npm run client:generate` fails here.

let rendered: GeneratedFile[];
let document: Record<string, unknown>;

beforeAll(async () => {
  document = await buildDocument();
  rendered = await renderClientFiles(document);
});

describe("the committed typed client", () => {
  it("is up to date with the OpenAPI document", () => {
    const stale = staleFiles(rendered);
    expect(stale, `stale against the OpenAPI document: ${stale.join(", ")}; run \`npm run build && npm run client:generate\``).toEqual([]);
  });

  it("is generated from the document the service serves at GET /v1/openapi.json", async () => {
    let app: TestApp | undefined;
    try {
      app = await startTestApp();
      const served = (await app.request("GET", "/v1/openapi.json")).body as Record<string, unknown>;
      // Only `servers` differs: it is the running service's own address.
      expect(document).toEqual({ ...served, servers: [{ url: "http://localhost:8080" }] });
    } finally {
      await app?.close();
    }
  });

  it("renders byte-identical files from the same document", async () => {
    expect(await renderClientFiles(document)).toEqual(rendered);
    expect(rendered.map((f) => f.file)).toEqual([GENERATED_FILES.document, GENERATED_FILES.schema]);
    expect(JSON.parse(rendered[0]!.contents)).toEqual(document);
    expect(rendered[1]!.contents).toContain('"/v1/agents/{agent_id}"');
  });
});

describe("generate-client --check", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "parley-client-check-"));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("names each stale or missing file, writes nothing and exits 1; a plain run writes them", async () => {
    const client = path.join(dir, "client");
    cpSync(defaultClientDir(), client, { recursive: true });
    const schemaFile = path.join(client, GENERATED_FILES.schema);
    const edited = readFileSync(schemaFile, "utf8").replace("export interface paths {", "export interface paths {\n    // edited by hand");
    writeFileSync(schemaFile, edited);
    rmSync(path.join(client, GENERATED_FILES.document));

    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    expect(await runGenerateClient(["--check"], { clientDir: client, out: log, err: log })).toBe(1);
    const message = lines.join("\n");
    expect(message).toContain("stale");
    expect(message).toContain(path.join("client", GENERATED_FILES.document));
    expect(message).toContain(path.join("client", GENERATED_FILES.schema));
    expect(message).toContain("npm run client:generate");
    expect(readFileSync(schemaFile, "utf8")).toBe(edited);
    expect(staleFiles(rendered, client)).toEqual([GENERATED_FILES.document, GENERATED_FILES.schema]);

    lines.length = 0;
    expect(await runGenerateClient([], { clientDir: client, out: log, err: log })).toBe(0);
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.startsWith("wrote"))).toBe(true);
    expect(staleFiles(rendered, client)).toEqual([]);

    lines.length = 0;
    expect(await runGenerateClient(["--check"], { clientDir: client, out: log, err: log })).toBe(0);
    expect(lines.join("\n")).toContain("up to date");
  });

  it("refuses unknown arguments", async () => {
    const lines: string[] = [];
    expect(await runGenerateClient(["--chek"], { clientDir: dir, out: (l) => lines.push(l), err: (l) => lines.push(l) })).toBe(2);
    expect(lines.join("\n")).toContain("--chek");
  });
});
