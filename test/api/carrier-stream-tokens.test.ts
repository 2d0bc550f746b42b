import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StreamGrant } from "../../src/services/carrier-stream-tokens.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// Carrier stream tokens are good once, for their own carrier, until they expire; the retention
// job's minute sweep deletes them (and the numbers they hold) an hour after they expired.

let app: TestApp;
let grant: StreamGrant;
beforeAll(async () => {
  app = await startTestApp();
  const account = await app.account();
  grant = { carrier: "twilio", accountId: account.id, direction: "inbound", callId: null, agentId: "agent_x", phoneNumber: "+14155550100", fromNumber: "+14155550123", carrierCallId: "CA" + "1".repeat(32) };
});
afterAll(async () => {
  await app?.close();
});

describe("carrier stream tokens", () => {
  it("are redeemed once, by their carrier only, until they expire; the sweep deletes those expired over an hour ago", async () => {
    const tokens = app.parley.services.carrierStreams;
    const now = Date.now();
    const live = await tokens.issue(grant, 60_000, now);
    const otherCarrier = await tokens.issue(grant, 60_000, now);
    const expiredLately = await tokens.issue(grant, 60_000, now - 10 * 60_000);
    const expiredLongAgo = await tokens.issue(grant, 60_000, now - 2 * 60 * 60_000);

    expect(await tokens.redeem("telnyx", otherCarrier)).toEqual({ refused: "unknown" });
    expect(await tokens.redeem("twilio", live)).toEqual(grant);
    expect(await tokens.redeem("twilio", live)).toEqual({ refused: "used" });
    expect(await tokens.redeem("twilio", "cst_" + "x".repeat(43))).toEqual({ refused: "unknown" });

    await app.parley.services.retention.run();
    expect(await tokens.redeem("twilio", expiredLately)).toEqual({ refused: "expired" });
    expect(await tokens.redeem("twilio", expiredLongAgo)).toEqual({ refused: "unknown" });
    expect(await tokens.redeem("twilio", otherCarrier)).toEqual(grant);
    const rows = await app.parley.services.db.selectFrom("carrier_stream_tokens").select("expires_at").execute();
    expect(rows).toHaveLength(3);
  });
});
