import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import SQLite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin } from "../helpers/admin-cli.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let dir: string;

beforeAll(async () => {
  app = await startTestApp();
  dir = mkdtempSync(path.join(os.tmpdir(), "parley-backup-"));
});
afterAll(async () => {
  await app.close();
});

/** Runs `parley admin backup --to to` (in process) and returns what it printed. */
async function backup(to: string) {
  return runAdmin(app.config, "backup", "--to", to, "--json");
}

/** The data directory holds nothing the backup left behind (its staging directory). */
function noStagingLeft(): void {
  expect(readdirSync(app.config.dataDir).filter((name) => name.startsWith(".backup-"))).toEqual([]);
}

describe("parley admin backup --to FILE", () => {
  it("writes an owner-only SQLite copy with the data, whatever the umask", async () => {
    const acct = await app.account();
    const to = path.join(dir, "good.db");
    // A umask that would make a file created 0600 read-only (0400) and a directory made 0700 unwritable (0500).
    const previous = process.umask(0o277);
    let run;
    try {
      run = await backup(to);
    } finally {
      process.umask(previous);
    }
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ file: to, bytes: statSync(to).size });
    expect(statSync(to).mode & 0o777).toBe(0o600);
    const copy = new SQLite(to, { readonly: true, fileMustExist: true });
    try {
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(copy.prepare("SELECT name FROM accounts WHERE id = ?").get(acct.id)).toEqual({ name: "Test account" });
    } finally {
      copy.close();
    }
    noStagingLeft();
  });

  it("refuses an existing empty file (a touched 0644 one) and leaves it as it was", async () => {
    const to = path.join(dir, "touched.db");
    writeFileSync(to, "");
    chmodSync(to, 0o644);
    const run = await backup(to);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${to} exists`);
    expect(statSync(to).mode & 0o777).toBe(0o644);
    expect(readFileSync(to).length).toBe(0);
    noStagingLeft();
  });

  it("refuses a dangling symbolic link and creates nothing where it points", async () => {
    const pointee = path.join(dir, "elsewhere", "stolen.db");
    mkdirSync(path.dirname(pointee));
    const to = path.join(dir, "link.db");
    symlinkSync(pointee, to);
    const run = await backup(to);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${to} exists`);
    expect(existsSync(pointee)).toBe(false);
    expect(lstatSync(to).isSymbolicLink()).toBe(true);
  });

  it("refuses an existing directory", async () => {
    const to = path.join(dir, "a-directory");
    mkdirSync(to);
    const run = await backup(to);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${to} exists`);
    expect(readdirSync(to)).toEqual([]);
  });

  it("refuses an existing file with content, and leaves it as it was", async () => {
    const to = path.join(dir, "notes.txt");
    writeFileSync(to, "keep me");
    const run = await backup(to);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${to} exists`);
    expect(readFileSync(to, "utf8")).toBe("keep me");
  });
});
