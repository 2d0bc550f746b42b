import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, secretValues } from "../../src/config.js";

const load = (env: NodeJS.ProcessEnv) => loadConfig({ env, cwd: mkdtempSync(path.join(os.tmpdir(), "parley-config-")) });
const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

describe("PARLEY_RECORDINGS_S3_* settings", () => {
  it("default to the data directory, region us-east-1 and prefix recordings/", () => {
    expect(load({}).recordings.s3).toEqual({ bucket: "", endpoint: "", region: "us-east-1", accessKeyId: "", secretAccessKey: "", prefix: "recordings/" });
  });

  it("read the bucket, endpoint (without its trailing slash) and keys; the secret key is one of the values logs scrub", () => {
    const config = load({
      PARLEY_RECORDINGS_S3_BUCKET: "calls.example-1",
      PARLEY_RECORDINGS_S3_ENDPOINT: "http://127.0.0.1:9000/",
      PARLEY_RECORDINGS_S3_REGION: "auto",
      PARLEY_RECORDINGS_S3_ACCESS_KEY_ID: "AKIAEXAMPLE",
      PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY: SECRET,
      PARLEY_RECORDINGS_S3_PREFIX: "parley/",
    });
    expect(config.recordings.s3).toEqual({ bucket: "calls.example-1", endpoint: "http://127.0.0.1:9000", region: "auto", accessKeyId: "AKIAEXAMPLE", secretAccessKey: SECRET, prefix: "parley/" });
    expect(secretValues(config)).toContain(SECRET);
  });

  it("refuse a bucket name S3 would not accept (one that could step out of the path-style URL among them)", () => {
    for (const bucket of ["ab", "Calls", "calls/../other", "calls?x=1", "-calls"]) {
      expect(() => load({ PARLEY_RECORDINGS_S3_BUCKET: bucket }), bucket).toThrow(/PARLEY_RECORDINGS_S3_BUCKET: must be a bucket name/);
    }
  });

  it("refuse half a key pair, without quoting the secret", () => {
    expect(() => load({ PARLEY_RECORDINGS_S3_BUCKET: "calls", PARLEY_RECORDINGS_S3_ACCESS_KEY_ID: "AKIAEXAMPLE" })).toThrow(/PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY: is required/);
    let message = "";
    try {
      load({ PARLEY_RECORDINGS_S3_BUCKET: "calls", PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY: SECRET });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/PARLEY_RECORDINGS_S3_ACCESS_KEY_ID: is required/);
    expect(message).not.toContain(SECRET);
  });
});
