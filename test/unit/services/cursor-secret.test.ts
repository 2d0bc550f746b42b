import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../../../engine/index.js";
import { loadCursorSecret } from "../../../src/services/cursor-codec.js";
import { runNodeScript } from "../../../scripts/parley-process.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "parley-secret-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The built loader (child processes run the build, as `parley serve` does). */
const BUILT = path.join(packageRoot(import.meta.url), "dist/src/services/cursor-codec.js");

/**
 * A process that waits for the wall clock to reach `startAt` (so several start at once), then
 * loads the secret of each directory in turn and prints them as hex, or its error.
 */
const RACER = `
const [startAt, ...dirs] = process.argv.slice(1);
const { loadCursorSecret } = await import(${JSON.stringify(BUILT)});
while (Date.now() < Number(startAt));
const out = [];
for (const dir of dirs) {
  try { out.push(loadCursorSecret(dir).toString("hex")); } catch (err) { out.push("error: " + err.message); }
}
process.stdout.write(JSON.stringify(out));
`;

describe("the cursor and recording-link secret", () => {
  it("is made once, 32 random bytes, in a file only its owner can read, and read back on the next start", () => {
    const dataDir = path.join(root, "data");
    const secret = loadCursorSecret(dataDir);
    expect(secret.length).toBe(32);
    const file = path.join(dataDir, "cursor-secret");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(loadCursorSecret(dataDir).equals(secret)).toBe(true);
  });

  it.each([
    ["empty", ""],
    ["31 bytes long", "ab".repeat(31)],
    ["not hex", "zz".repeat(32)],
  ])("refuses a secret file that is %s at start-up, naming the file", (_what, content) => {
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir);
    const file = path.join(dataDir, "cursor-secret");
    writeFileSync(file, content + "\n", { mode: 0o600 });
    expect(() => loadCursorSecret(dataDir)).toThrow(file);
    expect(() => loadCursorSecret(dataDir)).toThrow(/at least 32 bytes/);
    expect(readFileSync(file, "utf8")).toBe(content + "\n");
  });

  it("tightens a secret file that others could read", () => {
    const dataDir = path.join(root, "data");
    mkdirSync(dataDir, { mode: 0o755 });
    const file = path.join(dataDir, "cursor-secret");
    writeFileSync(file, "ab".repeat(32) + "\n", { mode: 0o644 });
    expect(loadCursorSecret(dataDir).toString("hex")).toBe("ab".repeat(32));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it("is created once when several processes start together: none crashes, all read the same full secret", async () => {
    const dirs = Array.from({ length: 40 }, (_, i) => path.join(root, `data-${i}`));
    const startAt = Date.now() + 1500;
    const racers = await Promise.all(Array.from({ length: 4 }, () => runNodeScript("--input-type=module", ["-e", RACER, String(startAt), ...dirs])));
    const seen = racers.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as string[];
    });
    for (const [i, dir] of dirs.entries()) {
      const onDisk = readFileSync(path.join(dir, "cursor-secret"), "utf8").trim();
      expect(onDisk).toMatch(/^[0-9a-f]{64}$/);
      for (const secrets of seen) expect(secrets[i]).toBe(onDisk);
    }
  });
});
