import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdmin } from "../helpers/admin-cli.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";

let app: TestApp;
let receiver: WebhookReceiver;

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0" });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await app.close();
});

describe("parley admin account low-balance", () => {
  it("sets the account's credits.low threshold, shows it, and -1 brings back the default", async () => {
    const acct = await app.account({ credits: 100 });
    const set = await runAdmin(app.config, "account", "low-balance", "--account", acct.id, "--threshold", "50", "--json");
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ id: acct.id, low_balance_threshold: 50 });
    expect(JSON.parse((await runAdmin(app.config, "account", "show", "--account", acct.id, "--json")).stdout).low_balance_threshold).toBe(50);

    const reset = await runAdmin(app.config, "account", "low-balance", "--account", acct.id, "--threshold=-1", "--json");
    expect(JSON.parse(reset.stdout).low_balance_threshold).toBe(10);
    const bad = await runAdmin(app.config, "account", "low-balance", "--account", acct.id, "--threshold", "lots");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--threshold must be an integer");
  });

  it("a charge made by the CLI that crosses it reaches the account's webhook through the running service", async () => {
    const acct = await app.account({ credits: 100 });
    const hook = await app.request("POST", "/v1/webhooks", { key: acct.key, body: { url: receiver.url, events: ["credits.low"] } });
    expect(hook.status).toBe(201);
    await runAdmin(app.config, "account", "low-balance", "--account", acct.id, "--threshold", "50");
    // The CLI is another process as far as the service knows: its worker finds the delivery on its next look.
    const charged = await runAdmin(app.config, "credits", "add", "--account", acct.id, "--amount=-60", "--json");
    expect(charged.code, charged.stderr).toBe(0);
    const [got] = await receiver.waitFor(1, 15_000);
    expect(got!.event).toBe("credits.low");
    expect(got!.body.data).toEqual({ balance: 40, threshold: 50, call_id: null });
  }, 20_000);
});
