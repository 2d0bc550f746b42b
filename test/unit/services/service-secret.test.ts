import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config.js";
import { loadServiceSecret } from "../../../src/services/cursor-codec.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "parley-service-secret-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("the service's signing secret", () => {
  it("is PARLEY_SECRET when set: the data directory is neither read nor written", () => {
    const secret = randomBytes(32).toString("hex");
    const dataDir = path.join(root, "data");
    expect(loadServiceSecret({ secret, dataDir }).toString("hex")).toBe(secret);
    expect(existsSync(dataDir)).toBe(false);

    // A file left by a single-node past is ignored, and left as it was.
    mkdirSync(dataDir);
    writeFileSync(path.join(dataDir, "cursor-secret"), "ab".repeat(32) + "\n", { mode: 0o600 });
    expect(loadServiceSecret({ secret, dataDir }).toString("hex")).toBe(secret);
    expect(readFileSync(path.join(dataDir, "cursor-secret"), "utf8")).toBe("ab".repeat(32) + "\n");
  });

  it("is the data directory's own file when PARLEY_SECRET is not set", () => {
    const dataDir = path.join(root, "data");
    const secret = loadServiceSecret({ secret: "", dataDir });
    expect(secret.length).toBe(32);
    expect(readFileSync(path.join(dataDir, "cursor-secret"), "utf8").trim()).toBe(secret.toString("hex"));
  });

  it("refuses a bad value given past loadConfig's check (overrides), naming the setting but not the value", () => {
    const dataDir = path.join(root, "data");
    // Buffer.from would make 1 byte of "abzz..." and 31 of the short one: neither may become a key.
    for (const bad of ["ab" + "zz".repeat(31), "ab".repeat(31), "ab".repeat(33)]) {
      expect(() => loadServiceSecret({ secret: bad, dataDir })).toThrow(ConfigError);
      expect(() => loadServiceSecret({ secret: bad, dataDir })).toThrow(/PARLEY_SECRET: must be exactly 64 hex characters/);
      expect(() => loadServiceSecret({ secret: bad, dataDir })).not.toThrow(bad);
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});
