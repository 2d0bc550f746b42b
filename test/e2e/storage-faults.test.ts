import { existsSync, mkdirSync, statSync, symlinkSync } from "node:fs";
import path from "node:path";
import { sql } from "kysely";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingsDir } from "../../src/services/recording-files.js";
import { withFileSizeLimit } from "../helpers/file-size-limit.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { errorOf, startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { logLines } from "../helpers/log-lines.js";

/**
 * A full disk, for real: a recording whose file is /dev/full (every write ENOSPC), a database
 * held to its size (`max_page_count`: SQLITE_FULL), and a write-ahead log that may not grow (a
 * file size limit: EFBIG, SQLITE_IOERR_WRITE). The call goes on and ends with its transcript,
 * the failure is logged and counted, /readyz says so, and nothing else breaks.
 */

let app: TestApp;
let acct: TestAccount;
let agentId: string;
const { destination, lines: logs } = logLines();

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_ENGINE: "1" }, pino({ level: "info" }, destination));
  acct = await app.account({ credits: 100 });
  const agent = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello, Acme Dental." } });
  agentId = agent.body.id;
}, 60_000);

afterAll(async () => {
  await app?.close();
});

const readyz = () => app.request("GET", "/readyz");

/** A web call that has heard the greeting and streams silence, as a phone line does. */
async function greetedCall(url: string): Promise<{ client: NativeMediaClient; callId: string }> {
  const client = await NativeMediaClient.connect(url, acct.key, 16000);
  const callId: string = (await client.waitFor((m) => m.type === "connected")).call_id;
  await client.waitFor((m) => m.type === "transcript" && m.role === "agent");
  client.startStreaming();
  return { client, callId };
}

/** Hangs up and waits for the stored end (status no longer in_progress). */
async function hangUp(client: NativeMediaClient, callId: string, timeoutMs = 15_000): Promise<any> {
  client.hangUp();
  await client.closed;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const call = (await app.request("GET", `/v1/calls/${callId}?include=transcript,recording`, { key: acct.key })).body;
    if (call.status !== "in_progress" || Date.now() > deadline) return call;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("disk full while recording", () => {
  it("a call whose recording file is /dev/full completes with its transcript and no recording; counted, logged, /readyz 503 naming the disk; the call beside it is recorded", async () => {
    // The call's id is known before it connects: its recording file is made a way to /dev/full.
    const web = await app.request("POST", "/v1/calls/web", { key: acct.key, body: { agent_id: agentId } });
    expect(web.status).toBe(201);
    const doomedId: string = web.body.call_id;
    mkdirSync(recordingsDir(app.dataDir), { recursive: true });
    symlinkSync("/dev/full", path.join(recordingsDir(app.dataDir), `${doomedId}.wav`));

    const { client: steady, callId: steadyId } = await greetedCall(`${app.baseUrl.replace(/^http/, "ws")}/media/ws?agent_id=${agentId}`);
    const { client: doomed } = await greetedCall(web.body.websocket_url.replace(/^ws:\/\/[^/]+/, app.baseUrl.replace(/^http/, "ws")));

    const notReady = await readyz();
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatchObject({
      status: "not_ready",
      reason: expect.stringMatching(/^disk full or failing: recording writes \(ENOSPC\) failed, the last at .*; free space on the disk of /),
      storage: [{ target: "recording", code: "ENOSPC", message: expect.stringContaining("no space left"), at: expect.any(String) }],
    });
    expect(app.parley.services.storageHealth.counts()).toEqual({ recording: 1, database: 0 });
    expect(logs.filter((l) => l.storage === "recording")).toEqual([
      expect.objectContaining({ level: 50, msg: "storage write failed: recording (ENOSPC)", call_id: doomedId, code: "ENOSPC", failures: 1 }),
    ]);
    // The doomed call is still live: it goes on, unrecorded.
    expect(doomed.closeCode).toBeUndefined();

    const doomedCall = await hangUp(doomed, doomedId);
    expect(doomedCall).toMatchObject({ status: "completed", recording_url: null });
    expect(doomedCall.transcript).toEqual([expect.objectContaining({ role: "agent", content: "Hello, Acme Dental." })]);
    expect(doomedCall.duration).toBeGreaterThan(0);
    // The link to /dev/full was the recording's file: it is gone, and nothing points to it.
    expect(existsSync(path.join(recordingsDir(app.dataDir), `${doomedId}.wav`))).toBe(false);
    const row = await app.parley.services.db.selectFrom("calls").select(["recording_path", "billed_credits"]).where("id", "=", doomedId).executeTakeFirstOrThrow();
    expect(row).toEqual({ recording_path: null, billed_credits: 1 });

    // The call beside it was recorded, and its recording shows the disk has room again.
    const steadyCall = await hangUp(steady, steadyId);
    expect(steadyCall.status).toBe("completed");
    expect(steadyCall.recording_url).toEqual(expect.any(String));
    expect((await readyz()).status).toBe(200);
    expect(app.parley.services.storageHealth.counts()).toEqual({ recording: 1, database: 0 });
  }, 60_000);
});

describe("disk full while writing the database", () => {
  it("SQLITE_FULL on an API write: 503 storage_unavailable with Retry-After, logged, counted, /readyz 503 naming the disk; reads go on; once there is room the write succeeds and /readyz is 200", async () => {
    const db = app.parley.services.db;
    const before = app.parley.services.storageHealth.counts().database;
    // The service's connection may not grow the file by a page: a real SQLITE_FULL for any write that needs one.
    const pages = (await sql<{ page_count: number }>`PRAGMA page_count`.execute(db)).rows[0]!.page_count;
    // A 20 KB prompt needs 5 overflow pages; fewer are free (precondition).
    expect((await sql<{ freelist_count: number }>`PRAGMA freelist_count`.execute(db)).rows[0]!.freelist_count).toBeLessThan(5);
    await sql.raw(`PRAGMA max_page_count = ${pages}`).execute(db);
    const big = { name: "Long prompt", system_prompt: "p".repeat(20_000), voice_id: "flite-slt" };
    try {
      const refused = await app.request("POST", "/v1/agents", { key: acct.key, body: big });
      expect(refused.status).toBe(503);
      expect(errorOf(refused)).toMatchObject({ code: "storage_unavailable", message: expect.stringContaining("disk is full") });
      expect(refused.headers.get("retry-after")).toBe("30");
      expect(app.parley.services.storageHealth.counts().database).toBe(before + 1);
      expect(logs.filter((l) => l.storage === "database")).toEqual([expect.objectContaining({ level: 50, msg: "storage write failed: database (SQLITE_FULL)", code: "SQLITE_FULL", failures: before + 1 })]);
      const notReady = await readyz();
      expect(notReady.status).toBe(503);
      expect(notReady.body.reason).toMatch(/^disk full or failing: database writes \(SQLITE_FULL\) failed/);
      expect(notReady.body.storage).toEqual([expect.objectContaining({ target: "database", code: "SQLITE_FULL" })]);
      // The process goes on: reads answer.
      expect((await app.request("GET", "/healthz")).status).toBe(200);
      expect((await app.request("GET", `/v1/agents/${agentId}`, { key: acct.key })).status).toBe(200);
    } finally {
      await sql.raw("PRAGMA max_page_count = 1073741823").execute(db);
    }
    expect((await app.request("POST", "/v1/agents", { key: acct.key, body: big })).status).toBe(201);
    expect((await readyz()).status).toBe(200);
    expect(logs.some((l) => l.storage === "database" && l.msg === "storage writes succeed again: database")).toBe(true);
  });

  it("a database that cannot grow while a call ends (EFBIG on its write-ahead log): the end is logged, counted and tried again, the call beside it goes on, the process lives; the end is stored once the disk takes writes again", async () => {
    const url = `${app.baseUrl.replace(/^http/, "ws")}/media/ws?agent_id=${agentId}&record=false`;
    const { client: steady, callId: steadyId } = await greetedCall(url);
    const { client, callId } = await greetedCall(url);
    const before = app.parley.services.storageHealth.counts().database;
    // Every commit appends to the write-ahead log (no checkpoint runs below 1000 pages): no file
    // of this process may grow past the log's present size, so the next commit fails.
    const wal = statSync(path.join(app.dataDir, "parley.db-wal")).size;
    await withFileSizeLimit(wal, async () => {
      client.hangUp();
      await client.closed;
      for (let i = 0; i < 100 && !logs.some((l) => l.call_id === callId && l.msg === "call end not stored; trying again"); i++) await new Promise((r) => setTimeout(r, 50));
      expect(logs.find((l) => l.call_id === callId && l.msg === "call end not stored; trying again")).toMatchObject({ level: 40, err: expect.objectContaining({ code: "SQLITE_IOERR_WRITE" }) });
      expect(app.parley.services.storageHealth.counts().database).toBeGreaterThan(before);
      const notReady = await readyz();
      expect(notReady.status).toBe(503);
      expect(notReady.body.reason).toMatch(/^disk full or failing: database writes \(SQLITE_IOERR_WRITE\) failed/);
      expect((await app.request("GET", `/v1/calls/${callId}`, { key: acct.key })).body.status).toBe("in_progress");
      expect((await app.request("GET", "/healthz")).status).toBe(200);
    });
    // Room again: a later attempt stores the end.
    const deadline = Date.now() + 15_000;
    while ((await app.request("GET", `/v1/calls/${callId}`, { key: acct.key })).body.status === "in_progress" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const stored = (await app.request("GET", `/v1/calls/${callId}?include=transcript`, { key: acct.key })).body;
    expect(stored.status).toBe("completed");
    expect(stored.transcript[0]).toMatchObject({ role: "agent", content: "Hello, Acme Dental." });
    expect((await readyz()).status).toBe(200);

    // The call beside it went on all along, and ends normally.
    expect(steady.closeCode).toBeUndefined();
    expect((await hangUp(steady, steadyId)).status).toBe("completed");
  }, 60_000);
});
