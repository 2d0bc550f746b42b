import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { errorOf, startTestApp } from "../helpers/test-app.js";

describe("unexpected failures", () => {
  it("answer 500 internal_error without internals, and /readyz says not ready", async () => {
    const app = await startTestApp();
    const { key } = await app.account();
    // The database goes away under the running server.
    await app.parley.services.db.destroy();
    const res = await app.request("GET", "/v1/agents", { key });
    expect(res.status).toBe(500);
    const error = errorOf(res);
    expect(error.code).toBe("internal_error");
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(js|ts)|Kysely|driver|destroy/i);
    expect(res.body.meta.request_id).toBe(res.headers.get("x-request-id"));
    const ready = await app.request("GET", "/readyz");
    expect(ready.status).toBe(503);
    await app.parley.http.close();
    rmSync(app.dataDir, { recursive: true, force: true });
  });
});
