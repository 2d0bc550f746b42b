import { spawn, type ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../engine/index.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// The documentation's receiver example (docs/webhooks.md) is run as it is printed, and Parley delivers to it.

/** The js block after the "receiver example" marker of docs/webhooks.md. */
function documentedReceiver(): string {
  const page = readFileSync(path.join(packageRoot(import.meta.url), "docs", "webhooks.md"), "utf8");
  const match = /<!-- receiver example[^>]*-->\s*```js\n([\s\S]*?)```/.exec(page);
  if (!match) throw new Error("docs/webhooks.md has no receiver example");
  return match[1]!;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let app: TestApp;
let child: ChildProcess;
let output = "";
let port = 0;
const SECRET = "whsec_docs_example_0123456789abcdef";

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_WEBHOOK_VERIFY_URL: "0" });
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "parley-receiver-")), "receiver.mjs");
  writeFileSync(file, documentedReceiver());
  port = await freePort();
  child = spawn(process.execPath, [file], { env: { ...process.env, PARLEY_WEBHOOK_SECRET: SECRET, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  // Listening once it accepts a connection.
  for (let i = 0; ; i++) {
    const ok = await new Promise<boolean>((resolve) => net.connect(port, "127.0.0.1").once("connect", function (this: net.Socket) { this.destroy(); resolve(true); }).once("error", () => resolve(false)));
    if (ok) break;
    if (i > 100) throw new Error(`receiver did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
});

afterAll(async () => {
  child?.kill();
  await app?.close();
});

async function printed(pattern: RegExp): Promise<void> {
  for (let i = 0; !pattern.test(output); i++) {
    if (i > 200) throw new Error(`receiver printed: ${output}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the documented receiver example", () => {
  it("verifies Parley's deliveries, and refuses a tampered body or a wrong secret", async () => {
    const acct = await app.account();
    const hook = await app.request("POST", "/v1/webhooks", { key: acct.key, body: { url: `http://127.0.0.1:${port}/`, events: ["*"], secret: SECRET } });
    expect(hook.status).toBe(201);
    const test = await app.request("POST", `/v1/webhooks/${hook.body.id}/test`, { key: acct.key });
    expect(test.body).toMatchObject({ status: "delivered", attempts: [{ status_code: 200 }] });
    await printed(/verified webhook\.test #\d+ \{"webhook_id":"wh_/);

    // Redelivered: the example answers 200 again and skips it as a repeat.
    const again = await app.request("POST", `/v1/webhooks/${hook.body.id}/deliveries/${test.body.id}/redeliver`, { key: acct.key });
    expect(again.body).toMatchObject({ status: "delivered", attempt_count: 2 });

    // Signed with another secret: refused with 400, and the attempt is logged as failed.
    const other = await app.request("POST", "/v1/webhooks", { key: acct.key, body: { url: `http://127.0.0.1:${port}/`, events: ["*"], secret: "whsec_not_the_receivers_secret_00" } });
    const refused = await app.request("POST", `/v1/webhooks/${other.body.id}/test`, { key: acct.key });
    expect(refused.body).toMatchObject({ status: "failed", attempts: [{ status_code: 400 }] });

    // A body changed after signing, or a timestamp over 300 s old: refused.
    const t = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ event: "webhook.test", data: { amount: 1 } });
    const signature = `t=${t},v1=${createHmac("sha256", SECRET).update(`${t}.${body}`).digest("hex")}`;
    const send = (b: string, sig: string) => fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers: { "x-parley-signature": sig, "x-parley-delivery": `dlv_manual_${b.length}` }, body: b });
    expect((await send(body, signature)).status).toBe(200);
    await printed(/verified webhook\.test #undefined \{"amount":1\}/);
    // Printed in order: had the redelivery not been skipped as a repeat, its line would be above.
    expect(output.match(/verified webhook\.test #\d+/g)).toHaveLength(1);
    expect((await send(body.replace("1", "9"), signature)).status).toBe(400);
    const old = t - 301;
    expect((await send(body, `t=${old},v1=${createHmac("sha256", SECRET).update(`${old}.${body}`).digest("hex")}`)).status).toBe(400);
  });
});
