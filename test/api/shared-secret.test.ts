import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../engine/audio/wav.js";
import { ConfigError, loadConfig, secretValues } from "../../src/config.js";
import { createLogger } from "../../src/core/logger.js";
import { insertCallRow } from "../helpers/call-rows.js";
import { logLines } from "../helpers/log-lines.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

// Several nodes behind one load balancer (issue 27): with one PARLEY_SECRET, a list cursor or a
// recording link one node hands out works on any other, whatever their data directories hold.
// Every app here opens the first one's database (the nodes share the data), each with its own
// data directory.

const SHARED = randomBytes(32).toString("hex");
const OTHER = randomBytes(32).toString("hex");

let a: TestApp;
let b: TestApp;
/** Same database, another secret. */
let stranger: TestApp;
/** Same database, no PARLEY_SECRET: the data directory's own secret. */
let unset: TestApp;
let owner: TestAccount;
let agentId: string;
const wav = encodeWav({ samples: Int16Array.from({ length: 800 }, (_, i) => Math.round(3000 * Math.sin(i / 5))), sampleRate: 8000, channels: 1 });

beforeAll(async () => {
  a = await startTestApp({}, { PARLEY_SECRET: SHARED });
  b = await startTestApp({}, { PARLEY_SECRET: SHARED }, undefined, { shareDatabaseWith: a });
  stranger = await startTestApp({}, { PARLEY_SECRET: OTHER }, undefined, { shareDatabaseWith: a });
  unset = await startTestApp({}, {}, undefined, { shareDatabaseWith: a });
  owner = await a.account();
  for (const name of ["One", "Two", "Three"]) {
    const created = await a.request("POST", "/v1/agents", { key: owner.key, body: { name, system_prompt: "You answer.", voice_id: "flite-slt" } });
    expect(created.status).toBe(201);
    agentId = created.body.id;
  }
});

afterAll(async () => {
  // The others first: closing `a` deletes the database file they opened.
  for (const app of [b, stranger, unset]) await app?.close();
  await a?.close();
});

/** The first page of two agents on `a`: its next_cursor, and the ids of all three in list order. */
async function firstPageOnA(): Promise<{ cursor: string; all: string[] }> {
  const all = (await a.request("GET", "/v1/agents?limit=3", { key: owner.key })).body.data.map((agent: { id: string }) => agent.id);
  const first = await a.request("GET", "/v1/agents?limit=2", { key: owner.key });
  expect(first.status).toBe(200);
  expect(first.body.next_cursor).toEqual(expect.any(String));
  return { cursor: first.body.next_cursor, all };
}

/** A call of the owner's with a recording in `a`'s data directory, and the link `a` hands out for it (path and query). */
async function recordingLinkFromA(): Promise<{ callId: string; link: string }> {
  const row = await insertCallRow(a.parley.services.db, { account_id: owner.id, agent_id: agentId, status: "completed", duration: 3 });
  const dir = path.join(a.dataDir, "recordings");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${row.id}.wav`);
  writeFileSync(file, wav);
  await a.parley.services.db.updateTable("calls").set({ recording_path: file }).where("id", "=", row.id).execute();
  const read = await a.request("GET", `/v1/calls/${row.id}?include=recording`, { key: owner.key });
  expect(read.status).toBe(200);
  const url = new URL(read.body.recording_url);
  return { callId: row.id, link: url.pathname + url.search };
}

describe("PARLEY_SECRET shared by several nodes", () => {
  it("lets a list cursor handed out by one node page on another", async () => {
    const { cursor, all } = await firstPageOnA();
    const next = await b.request("GET", `/v1/agents?limit=2&cursor=${encodeURIComponent(cursor)}`, { key: owner.key });
    expect(next.status).toBe(200);
    expect(next.body.data.map((agent: { id: string }) => agent.id)).toEqual([all[2]]);
    expect(next.body.next_cursor).toBeNull();
  });

  it("lets a recording link signed by one node serve the recording on another", async () => {
    const { link } = await recordingLinkFromA();
    const fetched = await fetch(b.baseUrl + link);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(wav)).toBe(true);
  });

  it("refuses the cursor and the link on a node with another secret, or with none set", async () => {
    const { cursor } = await firstPageOnA();
    const { link } = await recordingLinkFromA();
    for (const other of [stranger, unset]) {
      const next = await other.request("GET", `/v1/agents?limit=2&cursor=${encodeURIComponent(cursor)}`, { key: owner.key });
      expect(next.status).toBe(400);
      expect(errorOf(next).code).toBe("invalid_cursor");
      const fetched = await fetch(other.baseUrl + link);
      expect(fetched.status).toBe(403);
      expect(((await fetched.json()) as { error: { code: string } }).error.code).toBe("invalid_signature");
    }
  });

  it("is used instead of the data directory's file: none is made when it is set, one still is when it is not", () => {
    for (const app of [a, b, stranger]) expect(existsSync(path.join(app.dataDir, "cursor-secret")), app.dataDir).toBe(false);
    expect(existsSync(path.join(unset.dataDir, "cursor-secret"))).toBe(true);
  });

  it("is removed from every log line", () => {
    const { destination, lines } = logLines();
    const logger = createLogger("info", { secrets: secretValues(a.config), destination });
    logger.info({ note: `the secret is ${SHARED}` }, `secret ${SHARED}`);
    logger.flush();
    expect(lines).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain(SHARED);
  });
});

describe("a bad PARLEY_SECRET", () => {
  const BAD = [
    ["short", SHARED.slice(0, 62)],
    ["long", SHARED + "ab"],
    ["not hex", "zz" + SHARED.slice(2)],
    ["hex with a space in it", `${SHARED.slice(0, 32)} ${SHARED.slice(33)}`],
    ["base64", randomBytes(32).toString("base64")],
  ] as const;

  it.each(BAD)("stops start-up naming the setting, without quoting the value: %s", async (_what, value) => {
    const { destination, lines } = logLines();
    const started = startTestApp({}, { PARLEY_SECRET: value }, pino({ level: "trace" }, destination));
    const err = await started.then(
      async (app) => {
        await app.close();
        throw new Error("started with a bad PARLEY_SECRET");
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).key).toBe("PARLEY_SECRET");
    expect((err as Error).message).toMatch(/^configuration PARLEY_SECRET: must be exactly 64 hex characters/);
    expect((err as Error).message).not.toContain(value);
    expect(JSON.stringify(lines)).not.toContain(value);
  });

  it("in the configuration file stops start-up too, naming the file and key", () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), "parley-secret-file-"));
    try {
      const value = SHARED.slice(0, 40);
      writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ secret: value }));
      expect(() => loadConfig({ env: {}, cwd })).toThrow(/^configuration parley\.config\.json: secret: must be exactly 64 hex characters/);
      expect(() => loadConfig({ env: {}, cwd })).not.toThrow(value);
      writeFileSync(path.join(cwd, "parley.config.json"), JSON.stringify({ secret: SHARED.toUpperCase() }));
      expect(loadConfig({ env: {}, cwd }).secret).toBe(SHARED.toUpperCase());
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
