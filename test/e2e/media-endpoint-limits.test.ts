import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TwilioMediaClient } from "../helpers/media-client.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";

/**
 * The media endpoints under abuse, over loopback against the real service: hang-ups during
 * call set-up.
 */

// Every test here waits on real sockets and a real engine.
vi.setConfig({ testTimeout: 30_000 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (every 50 ms, at most `timeoutMs`). */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function startEngineApp(media: Record<string, number> = {}): Promise<TestApp> {
  const app = await startTestApp({}, { PARLEY_ENGINE: "1", ...Object.fromEntries(Object.entries(media).map(([k, v]) => [k, String(v)])) });
  return app;
}

async function agentOf(app: TestApp, acct: TestAccount): Promise<string> {
  const res = await app.request("POST", "/v1/agents", { key: acct.key, body: { name: "Front desk", system_prompt: "p", voice_id: "flite-slt", first_message: "Hello." } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function mediaTokenOf(app: TestApp, acct: TestAccount): Promise<string> {
  return (await app.request("GET", "/v1/account", { key: acct.key })).body.media_token;
}

function callRows(app: TestApp, accountId: string) {
  return app.parley.services.db.selectFrom("calls").selectAll().where("account_id", "=", accountId).execute();
}

describe("media endpoints with the default limits", () => {
  let app: TestApp;
  let wsBase: string;

  beforeAll(async () => {
    app = await startEngineApp();
    wsBase = app.baseUrl.replace(/^http/, "ws");
  }, 60_000);
  afterAll(async () => {
    await app?.close();
  });

  describe("a hang-up during call set-up", () => {
    it("twilio: a stream stopped right after its start message ends at once: stored completed, short, billed at most a minute", async () => {
      const acct = await app.account({ credits: 100 });
      const agentId = await agentOf(app, acct);
      const client = await TwilioMediaClient.connect(`${wsBase}/media/twilio`, { token: await mediaTokenOf(app, acct), agent_id: agentId });
      // Twilio's `stop` follows `start` before the service has routed the stream, then Twilio closes.
      client.hangUp();
      client.close();
      const call = await until("the call to be stored as ended", async () => {
        const rows = await callRows(app, acct.id);
        return rows.length === 1 && rows[0]!.status !== "in_progress" ? rows[0] : undefined;
      });
      expect(call).toMatchObject({ status: "completed", duration: 0, billed_credits: 0 });
    });
  });
});
