import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../scripts/parley-process.js";
import { loadConfig } from "../../src/config.js";
import { startParley } from "../../src/main.js";

// The data directory holds the database, the secret that signs cursors and recording links,
// and the recordings: nobody but the service's user may read it.

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "parley-data-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const modeOf = (file: string) => statSync(file).mode & 0o777;

/** Starts the service in-process on `dataDir` (engine off: files are what matters here), runs `during`, stops it. */
async function startAndStop(dataDir: string, during: () => void = () => undefined): Promise<void> {
  const config = loadConfig({
    env: { PARLEY_ENGINE: "0", PARLEY_SIP_PORT: "0" },
    cwd: root,
    overrides: { port: 0, host: "127.0.0.1", dataDir, logLevel: "silent" },
  });
  const parley = await startParley(config, pino({ level: "silent" }));
  try {
    during();
  } finally {
    await parley.stop();
  }
}

describe("the data directory", () => {
  it("is created 0700 with the database files and the secret 0600", async () => {
    const dataDir = path.join(root, "nested", "data");
    // SQLite removes the -wal and -shm files when the last connection closes: look while it runs.
    await startAndStop(dataDir, () => {
      expect(modeOf(dataDir)).toBe(0o700);
      for (const name of ["parley.db", "parley.db-wal", "parley.db-shm", "cursor-secret"]) expect(modeOf(path.join(dataDir, name)), name).toBe(0o600);
    });
  });

  it("of an existing installation is tightened at start-up, recordings included", async () => {
    const dataDir = path.join(root, "data");
    await startAndStop(dataDir);
    const recordings = path.join(dataDir, "recordings");
    mkdirSync(recordings);
    writeFileSync(path.join(recordings, "call_1.wav"), "RIFF");
    for (const dir of [dataDir, recordings]) chmodSync(dir, 0o755);
    for (const file of ["parley.db", "cursor-secret", "recordings/call_1.wav"]) chmodSync(path.join(dataDir, file), 0o644);

    await startAndStop(dataDir);
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(recordings)).toBe(0o700);
    for (const file of ["parley.db", "cursor-secret", "recordings/call_1.wav"]) expect(modeOf(path.join(dataDir, file)), file).toBe(0o600);
  });

  it("refuses to start with a secret file under 32 bytes, naming the file", async () => {
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir, { mode: 0o700 });
    const secret = path.join(dataDir, "cursor-secret");
    writeFileSync(secret, "", { mode: 0o600 });
    await expect(startAndStop(dataDir)).rejects.toThrow(secret);
    expect(readFileSync(secret, "utf8")).toBe("");
  });

  it("survives several processes starting on it together for the first time", { timeout: 120_000 }, async () => {
    for (let round = 0; round < 3; round++) {
      const dataDir = path.join(root, `data-${round}`);
      const runs = await Promise.all(Array.from({ length: 4 }, () => runCli(["admin", "account", "list", "--json"], { PARLEY_DATA_DIR: dataDir })));
      for (const run of runs) {
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        expect(JSON.parse(run.stdout)).toEqual([]);
      }
      expect(readFileSync(path.join(dataDir, "cursor-secret"), "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    }
  });
});
