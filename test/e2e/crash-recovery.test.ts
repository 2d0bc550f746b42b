import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { Migrator, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, runCliJson, startServer, type ServerProcess } from "../../scripts/parley-process.js";
import { openDatabase } from "../../src/db/database.js";
import { migrationProvider } from "../../src/db/migrations/index.js";
import { recordingFile } from "../../src/services/recording-files.js";
import { cliAccount } from "../helpers/cli-account.js";
import { fixtureAudio } from "../helpers/fixture-audio.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

// The service process killed with SIGKILL (no shutdown code runs) during live media calls and
// an outbound call ringing, then during a database migration; each time it is started again on
// the same data directory. Nothing is lost or doubled: every call ends once, billed once (to its
// last heartbeat), with what had been said; the migration is all or nothing.

const processes: ServerProcess[] = [];
const receivers: WebhookReceiver[] = [];
const dataDirs: string[] = [];
afterAll(async () => {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop("SIGKILL");
  await Promise.all(receivers.map((r) => r.close()));
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** A data directory of its own, removed after the tests (the upgrade's holds a 40 MB database). */
function newDataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "parley-crash-"));
  dataDirs.push(dir);
  return dir;
}

async function until<T>(what: string, read: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface CallRow {
  id: string;
  status: string;
  answered_at: string | null;
  updated_at: string;
  ended_at: string | null;
  duration: number | null;
  billed_credits: number | null;
  failure_reason: string | null;
  transcript: string | null;
  recording_path: string | null;
}

describe("a SIGKILL of the service during calls", () => {
  it("ends each live and ringing call once on restart: live ones billed once to their last heartbeat with their transcript and recording, the ringing one never billed nor dialled again", async () => {
    const dataDir = newDataDir();
    const env = {
      PARLEY_DATA_DIR: dataDir,
      PARLEY_ENGINE: "1",
      // A heartbeat a second (15 s by default), so the calls are killed seconds in, after one.
      PARLEY_CALL_HEARTBEAT_MS: "1000",
      // Four live calls at most: calls left live would hold every slot after the restart.
      PARLEY_PLAN_PRO_CONCURRENT_CALLS: "4",
      PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1",
      PARLEY_WEBHOOK_VERIFY_URL: "0",
    };
    // Four credits: a minute for each of the four calls, nothing more (a reservation left held would refuse the next call).
    const acct = await cliAccount(env, { credits: 4 });
    await runCliJson(["admin", "number", "add", "--account", acct.id, "--number", "+16505551234", "--country", "US"], env);
    const db = new Database(path.join(dataDir, "parley.db"), { readonly: true, fileMustExist: true });
    const row = (id: string) => db.prepare("SELECT * FROM calls WHERE id = ?").get(id) as CallRow;
    const events = (id: string) => (db.prepare("SELECT name FROM events WHERE call_id = ? ORDER BY seq").all(id) as Array<{ name: string }>).map((e) => e.name);
    const ledger = (id: string) => (db.prepare("SELECT amount FROM ledger WHERE call_id = ?").all(id) as Array<{ amount: number }>).map((l) => l.amount);
    const balance = () => (db.prepare("SELECT credit_balance AS b FROM accounts WHERE id = ?").get(acct.id) as { b: number }).b;
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    const clients: NativeMediaClient[] = [];
    try {
      let server = await startServer(env);
      processes.push(server);
      const agent = await acct.api(server.baseUrl, "POST", "/v1/agents", { name: "Ava", system_prompt: "You answer questions for Acme Dental.", voice_id: "flite-slt", first_message: "Hello, Acme Dental.", metadata: { opening_hours: "nine to five on weekdays" } });
      expect(agent.status).toBe(201);
      expect((await acct.api(server.baseUrl, "POST", "/v1/webhooks", { url: receiver.url, events: ["call.failed"] })).status).toBe(201);

      // Three live media calls, each caller asking a question once the greeting is over.
      const wsBase = server.baseUrl.replace(/^http/, "ws");
      const line = fixtureAudio("opening-hours", 16);
      const mediaCalls = await Promise.all(
        [0, 1, 2].map(async () => {
          const client = await NativeMediaClient.connect(`${wsBase}/media/ws?agent_id=${agent.body.id}`, acct.key, 16000);
          clients.push(client);
          const { call_id: callId } = await client.waitFor((m) => m.type === "connected");
          client.startStreaming();
          await client.waitForAgentSilence();
          await client.say(line);
          return callId as string;
        }),
      );
      // Killed once a heartbeat has stored each caller's words.
      for (const id of mediaCalls) await until(`a heartbeat storing ${id}'s caller words`, () => (row(id).transcript?.includes('"role":"user"') ? true : undefined));

      // An outbound call ringing (the simulator rings this number 3 s, then gives up: killed before).
      const placed = await acct.api(server.baseUrl, "POST", "/v1/calls", { phone_number: "+15005550002", agent_id: agent.body.id });
      expect(placed.status, JSON.stringify(placed.body)).toBe(200);
      const ringing = placed.body.id as string;
      await until("the outbound call ringing", () => (row(ringing).status === "ringing" ? true : undefined));

      expect(await server.stop("SIGKILL")).toBeNull();
      await Promise.all(clients.map((c) => c.closed));
      // What the dead process left: live calls marked alive at their last heartbeat, nothing billed or ended.
      const atKill = new Map(mediaCalls.map((id) => [id, row(id)]));
      for (const call of atKill.values()) {
        expect(call).toMatchObject({ status: "in_progress", ended_at: null, billed_credits: null });
        expect(events(call.id)).toEqual(["call.started", "call.answered"]);
        // The recording written so far is on disk; the row does not know it yet.
        expect(call.recording_path).toBeNull();
        expect(existsSync(recordingFile(dataDir, call.id))).toBe(true);
      }
      expect(row(ringing).status).toBe("ringing");
      expect(balance()).toBe(4);
      expect(receiver.received).toHaveLength(0);

      server = await startServer(env);
      processes.push(server);
      const recoveredLine = await until("the recovery's log line", () => server.stdout().split("\n").find((l) => l.includes("closed calls left live")));
      expect(JSON.parse(recoveredLine)).toMatchObject({ level: 40, calls: 4, msg: "closed calls left live by the previous process (failed, billed to their last heartbeat)" });
      for (const [id, before] of atKill) {
        const duration = Math.round((Date.parse(before.updated_at) - Date.parse(before.answered_at!)) / 1000);
        expect(duration).toBeGreaterThan(0);
        expect(row(id)).toMatchObject({ status: "failed", failure_reason: "interrupted", ended_at: before.updated_at, duration, billed_credits: 1, transcript: before.transcript, recording_path: recordingFile(dataDir, id) });
        expect(ledger(id)).toEqual([-1]);
        expect(events(id)).toEqual(["call.started", "call.answered", "call.failed", "call.transcript.ready", "call.recording.ready"]);
        const read = (await acct.api(server.baseUrl, "GET", `/v1/calls/${id}?include=transcript,recording`)).body;
        expect(read.transcript).toEqual(JSON.parse(before.transcript!));
        expect(read.transcript.some((s: { role: string; content: string }) => s.role === "user" && /hours/.test(s.content))).toBe(true);
        // The partial recording is served (its header says "to the end of the file").
        const recording = await fetch(server.baseUrl + new URL(read.recording_url).pathname + new URL(read.recording_url).search);
        expect(recording.status).toBe(200);
        expect((await recording.arrayBuffer()).byteLength).toBeGreaterThan(44);
      }
      expect(row(ringing)).toMatchObject({ status: "failed", failure_reason: "interrupted", answered_at: null, duration: null, billed_credits: null });
      expect(ledger(ringing)).toEqual([]);
      expect(events(ringing)).toEqual(["call.started", "call.ringing", "call.failed"]);
      expect(balance()).toBe(1);

      // Every slot and every held credit is free again: a new call is dialled (the simulator
      // answers this number and hangs up at once) with the one credit left; the ringing call is not dialled again.
      const next = await acct.api(server.baseUrl, "POST", "/v1/calls", { phone_number: "+15005551001", agent_id: agent.body.id });
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      await until("the new call to end", () => (["queued", "ringing", "in_progress"].includes(row(next.body.id).status) ? undefined : true));
      expect(row(next.body.id)).toMatchObject({ status: "completed", billed_credits: 0 });
      expect(events(ringing)).toEqual(["call.started", "call.ringing", "call.failed"]);

      // Each recovered call's call.failed reached the webhook once.
      const failed = await receiver.waitFor(4);
      expect(failed.map((r) => r.body.data.call_id).sort()).toEqual([...mediaCalls, ringing].sort());

      // A second restart (the engine is not needed: recovery runs before it) changes nothing.
      const settled = db.prepare("SELECT * FROM calls ORDER BY id").all();
      const charges = db.prepare("SELECT * FROM ledger ORDER BY id").all();
      const stored = db.prepare("SELECT * FROM events ORDER BY seq").all();
      expect(await server.stop("SIGTERM")).toBe(0);
      server = await startServer({ ...env, PARLEY_ENGINE: "0", PARLEY_LOG_LEVEL: "info" });
      processes.push(server);
      // Logged after start-up, so after any recovery line.
      await until("the start-up log line", () => (server.stdout().includes('"msg":"parley started"') ? true : undefined));
      expect(server.stdout()).not.toContain("closed calls left live");
      expect(db.prepare("SELECT * FROM calls ORDER BY id").all()).toEqual(settled);
      expect(db.prepare("SELECT * FROM ledger ORDER BY id").all()).toEqual(charges);
      expect(db.prepare("SELECT * FROM events ORDER BY seq").all()).toEqual(stored);
      expect(balance()).toBe(1);
      expect(await server.stop("SIGTERM")).toBe(0);
      expect(receiver.received).toHaveLength(4);
    } finally {
      for (const client of clients) client.stopPump();
      db.close();
    }
  }, 90_000);
});

describe("a SIGKILL of the service during a database migration", () => {
  it("leaves the database as it was before the upgrade; the next start applies every migration once and keeps every row", async () => {
    const dataDir = newDataDir();
    const file = path.join(dataDir, "parley.db");
    // A database of the first version holding 40,000 calls: the upgrade rebuilds and rewrites
    // the calls table (about a second here), long enough to be killed in the middle.
    const old = openDatabase(file);
    const first = await new Migrator({ db: old, provider: migrationProvider }).migrateTo("001-initial");
    expect(first.error).toBeUndefined();
    const at = "2026-01-05T10:00:00.000Z";
    await sql`INSERT INTO accounts VALUES ('acct_old', 'Old', 'pro', 10, 'whsec_x', 'mt_x', '{}', ${at}, ${at})`.execute(old);
    await sql`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
      INSERT INTO calls SELECT 'call_' || printf('%08d', i), 'acct_old', 'agent_old', NULL, 'outbound', 'completed',
        '+1415555' || printf('%04d', i % 10000), '+16505550100', '{}', '{}', 1, 3600, NULL, i % 300,
        '[{"role":"agent","content":"Hello, how can I help?","timestamp":0.1}]', NULL, '{"outcome":"completed"}', 1, ${at}, ${at}, ${at}, ${at}
      FROM n`.execute(old);
    await old.destroy();
    const probe = new Database(file, { timeout: 0 });
    const summary = () => probe.prepare("SELECT count(*) AS n, sum(duration) AS seconds, sum(length(transcript)) AS said, max(phone_number) AS last FROM calls").get();
    const applied = () => (probe.prepare("SELECT name FROM kysely_migration ORDER BY name").all() as Array<{ name: string }>).map((m) => m.name);
    const schema = () => probe.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").all();
    const before = summary();
    const oldSchema = schema();
    expect(applied()).toEqual(["001-initial"]);

    // The upgrade holds SQLite's write lock from its first statement to its commit. Killed while
    // it holds it and has written a megabyte of its changes to the WAL: in the middle of its
    // work (were each statement committed on its own, some would be by then).
    const child = spawn(process.execPath, [CLI, "serve"], { env: { ...process.env, PARLEY_DATA_DIR: dataDir, PARLEY_ENGINE: "0", PARLEY_HOST: "127.0.0.1", PARLEY_PORT: "0", PARLEY_SIP_PORT: "0", PARLEY_LOG_LEVEL: "info" }, stdio: "ignore" });
    const exited = new Promise<string | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    const writeLockHeld = () => {
      try {
        probe.exec("BEGIN IMMEDIATE");
        probe.exec("ROLLBACK");
        return false;
      } catch (err) {
        if ((err as { code?: string }).code === "SQLITE_BUSY") return true;
        throw err;
      }
    };
    const walBytes = () => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    await until("the upgrade under way", () => (walBytes() >= 1 << 20 && writeLockHeld() ? true : undefined));
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    // Killed mid-upgrade: nothing of it stayed (one transaction), the old schema and rows are whole.
    expect(applied()).toEqual(["001-initial"]);
    expect(schema()).toEqual(oldSchema);
    expect(summary()).toEqual(before);
    expect(probe.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });

    const server = await startServer({ PARLEY_DATA_DIR: dataDir, PARLEY_ENGINE: "0", PARLEY_LOG_LEVEL: "info" });
    processes.push(server);
    const all = Object.keys(await migrationProvider.getMigrations());
    const migratedLine = await until("the migration's log line", () => server.stdout().split("\n").find((l) => l.includes('"msg":"database migrated"')));
    expect(JSON.parse(migratedLine).applied).toEqual(all.slice(1));
    expect(await server.stop("SIGTERM")).toBe(0);
    expect(applied()).toEqual(all);
    expect(probe.prepare("SELECT count(*) AS n FROM kysely_migration").get()).toEqual({ n: all.length });
    expect(summary()).toEqual(before);
    // What the upgrade itself moves: each call's outcome out of its analysis.
    expect(probe.prepare("SELECT count(*) AS n FROM calls WHERE outcome = 'completed' AND analysis IS NULL").get()).toEqual({ n: 40_000 });
    expect(probe.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(probe.prepare("PRAGMA foreign_key_check").all()).toEqual([]);
    probe.close();
  }, 60_000);
});
