import { spawnSync } from "node:child_process";
import dgram from "node:dgram";
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, runCliJson, runNodeScript, startServer } from "../../scripts/parley-process.js";
import { freeUdpPort } from "../helpers/sipp.js";

const agentBody = { name: "Front desk", system_prompt: "Answer politely.", voice_id: "flite-slt" };

// Each test starts several processes; give them more than the default 5 s on a loaded machine.
const SLOW = { timeout: 60_000 };

async function api(baseUrl: string, method: string, urlPath: string, key: string, body?: unknown) {
  const res = await fetch(baseUrl + urlPath, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("parley as a process: CLI, serve, restart, SIGTERM", () => {
  it("keys from the CLI work against the server, data and cursors survive a restart, SIGTERM exits cleanly", SLOW, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    // The REST API is what this test is about; the media engine is covered by media-call.test.ts.
    const env = { PARLEY_DATA_DIR: dataDir, PARLEY_ENGINE: "0" };

    const account = await runCliJson(["admin", "account", "create", "--name", "Acme", "--plan", "pro", "--credits", "100"], env);
    expect(account.id).toMatch(/^acct_/);
    expect(account.credit_balance).toBe(100);
    const key = await runCliJson(["admin", "key", "create", "--account", account.id, "--name", "dev"], env);
    expect(key.key).toMatch(/^sk_parley_/);
    expect(existsSync(path.join(dataDir, "parley.db"))).toBe(true);

    let server = await startServer(env);
    for (let i = 0; i < 3; i++) expect((await api(server.baseUrl, "POST", "/v1/agents", key.key, { ...agentBody, name: `Agent ${i}` })).status).toBe(201);
    const firstPage = await api(server.baseUrl, "GET", "/v1/agents?limit=2", key.key);
    expect(firstPage.body.has_more).toBe(true);
    expect(await server.stop("SIGTERM")).toBe(0);

    server = await startServer(env);
    const secondPage = await api(server.baseUrl, "GET", `/v1/agents?limit=2&cursor=${encodeURIComponent(firstPage.body.next_cursor)}`, key.key);
    expect(secondPage.status).toBe(200);
    expect(secondPage.body.data.map((a: { name: string }) => a.name)).toEqual(["Agent 0"]);

    const credits = await runCliJson(["admin", "credits", "add", "--account", account.id, "--amount", "40"], env);
    expect(credits.credit_balance).toBe(140);
    expect((await api(server.baseUrl, "GET", "/v1/account", key.key)).body.credit_balance).toBe(140);

    const keys = await runCliJson(["admin", "key", "list", "--account", account.id], env);
    expect(keys).toHaveLength(1);
    expect(JSON.stringify(keys)).not.toContain(key.key);
    expect(keys[0].last_used_at).not.toBeNull();
    await runCliJson(["admin", "key", "revoke", "--key", key.id], env);
    expect((await api(server.baseUrl, "GET", "/v1/agents", key.key)).status).toBe(401);

    expect(await server.stop("SIGTERM")).toBe(0);
  });

  // CI runs this file under Node 24 as well (scripts/node24.sh): the engine's workers, native
  // modules and recognizer processes must let the service stop cleanly on either.
  it("places a simulator call to its end on the engine, then SIGTERM exits 0", { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    const env = { PARLEY_DATA_DIR: dataDir, PARLEY_SIP_PORT: "0" };
    const account = await runCliJson(["admin", "account", "create", "--name", "Acme", "--plan", "pro", "--credits", "100"], env);
    const key = (await runCliJson(["admin", "key", "create", "--account", account.id, "--name", "dev"], env)).key;
    const server = await startServer(env);
    try {
      const agent = await api(server.baseUrl, "POST", "/v1/agents", key, { ...agentBody, first_message: "Hello, Acme Dental.", metadata: { business_name: "Acme Dental", opening_hours: "nine to five on weekdays" } });
      expect((await api(server.baseUrl, "POST", "/v1/phone-numbers", key, { phone_number: "+16505550142", country: "US" })).status).toBe(201);
      await runCliJson(["admin", "number", "approve", "+16505550142", "--json"], env);
      const placed = await api(server.baseUrl, "POST", "/v1/calls", key, { phone_number: "+14155550123", agent_id: agent.body.id });
      expect(placed.status, JSON.stringify(placed.body)).toBe(200);
      let call: any;
      for (const end = Date.now() + 90_000; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 500))) {
        call = (await api(server.baseUrl, "GET", `/v1/calls/${placed.body.id}?include=transcript`, key)).body;
        if (!["queued", "ringing", "in_progress"].includes(call.status)) break;
      }
      // The callee asked its question and hung up after the answer: a whole conversation.
      expect(call.status).toBe("completed");
      expect(call.transcript.filter((s: { role: string }) => s.role === "user").length).toBeGreaterThan(0);
      expect(call.transcript.filter((s: { role: string }) => s.role === "agent").length).toBeGreaterThan(1);
    } finally {
      expect(await server.stop("SIGTERM")).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("stops at start-up on bad configuration with a message naming the key", SLOW, async () => {
    const result = await runCli(["serve"], { PARLEY_PORT: "not-a-port", PARLEY_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "parley-e2e-")) });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("PARLEY_PORT");
  });

  it("stops at start-up on a malformed PARLEY_SIP_ALLOW entry, naming it, before the engine loads", SLOW, async () => {
    // "10.0.0.1/" once read as 10.0.0.1/0 (everyone); a refused entry used to print its error
    // and leave the process hanging with the engine loaded. A process still running after 30 s is killed (code null).
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    const env = { PARLEY_DATA_DIR: dataDir, PARLEY_HOST: "127.0.0.1", PARLEY_PORT: "0", PARLEY_SIP_HOST: "127.0.0.1", PARLEY_SIP_PORT: String(await freeUdpPort()), PARLEY_SIP_ALLOW: "203.0.113.7, 10.0.0.1/" };
    const result = await runCli(["serve"], env, { killAfterMs: 30_000 });
    expect(result.code, result.stderr).toBe(78);
    expect(result.stderr).toContain('PARLEY_SIP_ALLOW: "10.0.0.1/" is not an IPv4 address or CIDR');
  });

  it("exits at once with one line naming the setting when a port is taken or the carrier cannot work, the engine loaded or not", SLOW, async () => {
    // Each used to print a stack trace and then hang with the engine's workers running, so a
    // service manager saw it up. A process still running after 30 s is killed (code null).
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    // One session and one TTS worker: still an engine whose threads would keep a hung process
    // up, at less start-up cost than one per core (about 0.7 s per process here).
    const base = { PARLEY_DATA_DIR: dataDir, PARLEY_HOST: "127.0.0.1", PARLEY_SIP_HOST: "127.0.0.1", PARLEY_SESSION_WORKERS: "1", PARLEY_TTS_WORKERS: "1" };
    const udp = dgram.createSocket("udp4");
    const tcp = net.createServer();
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    try {
      const sipTaken = await runCli(["serve"], { ...base, PARLEY_PORT: "0", PARLEY_SIP_PORT: String(udp.address().port) }, { killAfterMs: 30_000 });
      const apiTaken = await runCli(["serve"], { ...base, PARLEY_PORT: String((tcp.address() as net.AddressInfo).port), PARLEY_SIP_PORT: String(await freeUdpPort()) }, { killAfterMs: 30_000 });
      const apiTakenNoEngine = await runCli(["serve"], { ...base, PARLEY_ENGINE: "0", PARLEY_PORT: String((tcp.address() as net.AddressInfo).port) }, { killAfterMs: 30_000 });
      const noTrunk = await runCli(["serve"], { ...base, PARLEY_PORT: "0", PARLEY_SIP_PORT: "0", PARLEY_CARRIER: "sip" }, { killAfterMs: 30_000 });
      for (const [run, code, setting] of [
        [sipTaken, 1, "PARLEY_SIP_PORT"],
        [apiTaken, 1, "PARLEY_PORT"],
        [apiTakenNoEngine, 1, "PARLEY_PORT"],
        [noTrunk, 78, "PARLEY_CARRIER"],
      ] as const) {
        expect(run.code, run.stderr).toBe(code);
        const lines = run.stderr.trim().split("\n");
        expect(lines, run.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(/^parley: /);
        expect(lines[0]).toContain(setting);
      }
      expect(sipTaken.stderr).toContain("already in use");
      expect(apiTaken.stderr).toContain("already in use");
    } finally {
      udp.close();
      tcp.close();
    }
    // Nothing was left half-open: the same data directory serves at once.
    const server = await startServer({ PARLEY_DATA_DIR: dataDir, PARLEY_ENGINE: "0" });
    expect(await server.stop("SIGTERM")).toBe(0);
  });

  it("runs the project's own npm commands without npm warnings", SLOW, async () => {
    const env = { ...process.env, PARLEY_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "parley-e2e-")) };
    const npm = spawnSync("npm", ["run", "migrate"], { env, encoding: "utf8" });
    expect(npm.status, npm.stderr).toBe(0);
    expect(npm.stdout).toContain("database ready");
    expect(npm.stderr).not.toMatch(/npm warn/i);
  });

  it("answers --help on every command and script before reading any configuration or database", SLOW, async () => {
    const dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-e2e-")), "never-made");
    // A configuration that would stop start-up: help must not read it.
    const env = { PARLEY_DATA_DIR: dataDir, PARLEY_PORT: "not-a-port" };
    const keyCreate = await runCli(["admin", "key", "create", "--help"], env);
    expect(keyCreate.code, keyCreate.stderr).toBe(0);
    expect(keyCreate.stdout).toContain("key create --account ID --name NAME");
    expect(keyCreate.stdout).not.toContain("account create");
    for (const command of [["serve", "--help"], ["migrate", "-h"], ["admin", "--help"], ["talk", "--help"]]) {
      const run = await runCli(command, env);
      expect(run.code, `${command.join(" ")}: ${run.stderr}`).toBe(0);
      expect(run.stdout, command.join(" ")).toContain(`parley ${command[0]}`);
    }
    for (const script of ["bench.js", "webhook-bench.js", "api-throughput.js", "list-pages-bench.js", "make-fixtures.js", "generate-client.js", "console-screenshots.js"]) {
      const run = await runNodeScript(path.join("dist", "scripts", script), ["--help"], env);
      expect(run.code, `${script}: ${run.stderr}`).toBe(0);
      expect(run.stdout, script).toMatch(/^(npm run|parley) /);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it("backs the database up while serving, and restores it once the service is stopped", SLOW, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-e2e-"));
    const env = { PARLEY_DATA_DIR: dataDir, PARLEY_ENGINE: "0" };
    const account = await runCliJson(["admin", "account", "create", "--name", "Acme", "--plan", "pro"], env);
    const key = await runCliJson(["admin", "key", "create", "--account", account.id, "--name", "dev"], env);
    let server = await startServer(env);
    expect((await api(server.baseUrl, "POST", "/v1/agents", key.key, { ...agentBody, name: "Before" })).status).toBe(201);

    const backup = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-backup-")), "parley-backup.db");
    const made = await runCliJson(["admin", "backup", "--to", backup], env);
    expect(made).toMatchObject({ file: backup, bytes: expect.any(Number) });
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect((await runCli(["admin", "backup", "--to", backup], env)).stderr).toContain("exists");
    expect((await api(server.baseUrl, "POST", "/v1/agents", key.key, { ...agentBody, name: "After" })).status).toBe(201);

    // Not under a running service: it would go on writing to the file it has open. SQLite's
    // lock tells, with the pid file gone too; the database is left as it was.
    const refused = await runCli(["admin", "restore", "--from", backup], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`parley serve is process ${server.child.pid} by its pid file): stop it first`);
    rmSync(path.join(dataDir, "parley.pid"));
    const refusedWithoutPid = await runCli(["admin", "restore", "--from", backup], env);
    expect(refusedWithoutPid.code).toBe(2);
    expect(refusedWithoutPid.stderr).toContain("is open in another process (parley serve or an admin command): stop it first");
    const untouched = await api(server.baseUrl, "GET", "/v1/agents", key.key);
    expect(untouched.body.data.map((a: { name: string }) => a.name)).toEqual(["After", "Before"]);
    expect(await server.stop("SIGTERM")).toBe(0);
    // A pid file naming a live process that is not the service (a pid reused after a crash) does not stop a restore.
    writeFileSync(path.join(dataDir, "parley.pid"), `${process.pid}\n`);

    const notDb = path.join(dataDir, "notes.txt");
    writeFileSync(notDb, "hello");
    expect((await runCli(["admin", "restore", "--from", notDb], env)).stderr).toContain("not a database Parley can read");
    const restored = await runCliJson(["admin", "restore", "--from", backup], env);
    expect(restored).toMatchObject({ from: backup, applied: [] });
    expect(statSync(path.join(dataDir, "parley.db")).mode & 0o777).toBe(0o600);
    server = await startServer(env);
    const agents = await api(server.baseUrl, "GET", "/v1/agents", key.key);
    expect(agents.body.data.map((a: { name: string }) => a.name)).toEqual(["Before"]);
    expect(await server.stop("SIGTERM")).toBe(0);
  });

  it("explains CLI mistakes with exit code 2", SLOW, async () => {
    const env = { PARLEY_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "parley-e2e-")) };
    const noPlan = await runCli(["admin", "account", "create", "--name", "X"], env);
    expect(noPlan.code).toBe(2);
    expect(noPlan.stderr).toContain("--plan is required");
    const badPlan = await runCli(["admin", "account", "create", "--name", "X", "--plan", "free"], env);
    expect(badPlan.stderr).toContain("pro, agency");
    const badPermission = await runCli(["admin", "key", "create", "--account", "acct_x", "--name", "k"], env);
    expect(badPermission.code).toBe(2);
    expect(badPermission.stderr).toContain("no account acct_x");
    const unknown = await runCli(["admin", "frobnicate"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("account create");
  });
});
