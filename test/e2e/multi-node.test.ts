import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliJson, startServer, type ServerProcess } from "../../scripts/parley-process.js";
import type { Db } from "../../src/db/database.js";
import { openPostgres } from "../../src/db/postgres.js";
import { cliAccount, type CliAccount } from "../helpers/cli-account.js";
import { NativeMediaClient } from "../helpers/media-client.js";
import { startPostgresCluster, type PostgresCluster } from "../helpers/postgres-cluster.js";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.js";
import { untilValue } from "../helpers/until.js";

// Two `parley serve` processes on loopback sharing one PostgreSQL database, as a deployment of
// several nodes runs: each with its own data directory and node id, the same PARLEY_SECRET.
// Heartbeats every second and a 3 s grace, so a lost node is noticed within seconds.

let cluster: PostgresCluster;
let url: string;
let db: Db;
const secret = randomBytes(32).toString("hex");
const dataDirs: string[] = [];
const servers: ServerProcess[] = [];
const clients: NativeMediaClient[] = [];
let receiver: WebhookReceiver;

beforeAll(async () => {
  cluster = await startPostgresCluster();
  url = await cluster.createDatabase();
  db = openPostgres(url);
  receiver = await startWebhookReceiver();
}, 60_000);
afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop("SIGKILL");
  await receiver?.close();
  await db?.destroy();
  await cluster?.stop();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function nodeEnv(nodeId: string): NodeJS.ProcessEnv {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `parley-${nodeId}-`));
  dataDirs.push(dataDir);
  return {
    PARLEY_DATA_DIR: dataDir,
    PARLEY_DATABASE_URL: url,
    PARLEY_SECRET: secret,
    PARLEY_NODE_ID: nodeId,
    PARLEY_ENGINE: "1",
    PARLEY_SESSION_WORKERS: "1",
    PARLEY_CALL_CAPACITY: "6",
    PARLEY_ENGINE_ACCOUNT_SHARE_PERCENT: "100",
    PARLEY_CALL_HEARTBEAT_MS: "1000",
    PARLEY_NODE_GRACE_MS: "3000",
    PARLEY_CAMPAIGN_POLL_MS: "50",
    PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: "1",
    PARLEY_WEBHOOK_VERIFY_URL: "0",
  };
}

async function startNode(nodeId: string): Promise<ServerProcess> {
  const server = await startServer(nodeEnv(nodeId));
  servers.push(server);
  return server;
}


const callRow = (id: string) => db.selectFrom("calls").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const ledgerOf = async (id: string) => (await db.selectFrom("ledger").select("amount").where("call_id", "=", id).execute()).map((l) => l.amount);
const eventsOf = async (id: string) => (await db.selectFrom("events").select("name").where("call_id", "=", id).orderBy("seq").execute()).map((e) => e.name);

/** A browser-style media call to `server`, caller silent: live until hung up. */
async function mediaCall(server: ServerProcess, acct: CliAccount, agentId: string): Promise<{ id: string; client: NativeMediaClient }> {
  const client = await NativeMediaClient.connect(`${server.baseUrl.replace(/^http/, "ws")}/media/ws?agent_id=${agentId}`, acct.key, 16000);
  clients.push(client);
  const { call_id: id } = await client.waitFor((m) => m.type === "connected");
  client.startStreaming();
  return { id, client };
}

describe("two nodes on one PostgreSQL database", () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let acct: CliAccount;
  let agentId: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([startNode("node-a"), startNode("node-b")]);
    acct = await cliAccount(nodeEnv("cli"), { credits: 1000 });
    const agent = await acct.api(a.baseUrl, "POST", "/v1/agents", { name: "Ava", system_prompt: "You answer questions for Acme Dental.", voice_id: "flite-slt", first_message: "Hello, Acme Dental." });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
  }, 60_000);

  it("calls created through either node are placed once; a campaign over both dials each contact once within max_concurrent; each webhook is delivered once", async () => {
    // The simulator answers +15005551xxx and hangs up at once.
    const answersAndHangsUp = (i: number) => `+15005551${String(i).padStart(3, "0")}`;
    await runCliJson(["admin", "number", "add", "--account", acct.id, "--number", "+16505551234", "--country", "US"], nodeEnv("cli"));
    const hook = await acct.api(a.baseUrl, "POST", "/v1/webhooks", { url: receiver.url, events: ["*"] });
    expect(hook.status).toBe(201);

    const placed = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const res = await acct.api((i % 2 ? b : a).baseUrl, "POST", "/v1/calls", { phone_number: answersAndHangsUp(i), agent_id: agentId });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.id as string;
      }),
    );
    const ended = (id: string) => async () => !["queued", "ringing", "in_progress"].includes((await callRow(id)).status);
    for (const id of placed) await untilValue(`call ${id} to end`, ended(id));
    for (const id of placed) {
      expect((await callRow(id)).status).toBe("completed");
      expect((await eventsOf(id)).filter((e) => e === "call.ringing")).toHaveLength(1);
    }

    const campaign = await acct.api(b.baseUrl, "POST", "/v1/campaigns", {
      name: "Both nodes",
      agent_id: agentId,
      contacts: Array.from({ length: 10 }, (_, i) => ({ phone: answersAndHangsUp(100 + i) })),
      settings: { max_concurrent: 2, calling_hours: { start: "00:00", end: "24:00" }, timezone: "UTC" },
    });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
    let maxLive = 0;
    const done = await untilValue(
      "the campaign to finish",
      async () => {
        const live = await db.selectFrom("calls").select((eb) => eb.fn.countAll<number>().as("n")).where("campaign_id", "=", campaign.body.id).where("status", "in", ["ringing", "in_progress"]).executeTakeFirstOrThrow();
        maxLive = Math.max(maxLive, Number(live.n));
        const row = await db.selectFrom("campaigns").select("status").where("id", "=", campaign.body.id).executeTakeFirstOrThrow();
        return row.status === "completed" && row;
      },
      60_000,
    );
    expect(done.status).toBe("completed");
    expect(maxLive).toBeLessThanOrEqual(2);
    const dialled = await db.selectFrom("calls").select(["contact_id", "node_id"]).where("campaign_id", "=", campaign.body.id).execute();
    expect(dialled).toHaveLength(10);
    expect(new Set(dialled.map((c) => c.contact_id)).size).toBe(10);

    // Every event since the webhook reaches the receiver once, whichever node's worker sent it.
    const stored = await db.selectFrom("deliveries").select("event_id").where("webhook_id", "=", hook.body.id).execute();
    expect(stored.length).toBeGreaterThan(30);
    await untilValue(`every event delivered (${stored.length} due)`, async () => new Set(receiver.received.map((r) => r.body?.event_id)).size >= stored.length || undefined, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const byEvent = new Map<string, number>();
    for (const r of receiver.received) byEvent.set(r.body.event_id, (byEvent.get(r.body.event_id) ?? 0) + 1);
    expect([...byEvent.values()].filter((n) => n > 1)).toEqual([]);
    expect(byEvent.size).toBe(stored.length);
  }, 120_000);

  it("end a call through either node: the node running it hangs it up and stores it, once", async () => {
    const onB = await mediaCall(b, acct, agentId);
    await onB.client.waitForAgentSilence();
    // Asked several times at once (a client retrying, or flooding): one end, every answer the ended call or 409.
    const answers = await Promise.all(Array.from({ length: 5 }, () => acct.api(a.baseUrl, "POST", `/v1/calls/${onB.id}/end`)));
    const ended = answers.find((r) => r.status === 200)!;
    expect(ended.body).toMatchObject({ id: onB.id, status: "completed" });
    for (const r of answers) expect(r.status === 200 ? r.body.status : r.body.error.code).toBe(r.status === 200 ? "completed" : "call_already_ended");
    await onB.client.closed;
    const row = await callRow(onB.id);
    // Stored by node B, which ran it: the engine's end reason and its recording.
    expect(row).toMatchObject({ status: "completed", node_id: "node-b" });
    expect(row.end_reason).not.toBeNull();
    expect(await ledgerOf(onB.id)).toEqual([-1]);
    expect((await eventsOf(onB.id)).filter((e) => e === "call.completed")).toHaveLength(1);
  }, 60_000);

  it("a node killed with SIGKILL mid-call: the survivor closes and bills its calls once, its own calls untouched", async () => {
    const onA = await Promise.all([mediaCall(a, acct, agentId), mediaCall(a, acct, agentId)]);
    const onB = await mediaCall(b, acct, agentId);
    // Each call marked alive at least once by its node's heartbeat.
    for (const { id } of [...onA, onB]) {
      const started = (await callRow(id)).updated_at;
      await untilValue(`a heartbeat of ${id}`, async () => (await callRow(id)).updated_at > started);
    }
    const beforeKill = new Map(await Promise.all(onA.map(async ({ id }) => [id, await callRow(id)] as const)));
    expect(await a.stop("SIGKILL")).toBeNull();
    const killedAt = Date.now();

    for (const { id } of onA) {
      const closed = await untilValue(`${id} closed by node B`, async () => {
        const row = await callRow(id);
        return row.status !== "in_progress" && row;
      });
      // Failed, interrupted, ended at its last heartbeat (not when node B noticed) and billed to it.
      expect(closed).toMatchObject({ status: "failed", failure_reason: "interrupted", billed_credits: 1 });
      expect(Date.parse(closed.ended_at!)).toBeGreaterThanOrEqual(Date.parse(beforeKill.get(id)!.updated_at));
      expect(Date.parse(closed.ended_at!)).toBeLessThanOrEqual(killedAt);
      expect(closed.duration).toBe(Math.round((Date.parse(closed.ended_at!) - Date.parse(closed.answered_at!)) / 1000));
      expect(await ledgerOf(id)).toEqual([-1]);
      expect((await eventsOf(id)).filter((e) => e === "call.failed")).toHaveLength(1);
    }
    // Node B's own call went on: still live and its own, still marked alive by B's heartbeat.
    const ownCall = await callRow(onB.id);
    expect(ownCall).toMatchObject({ status: "in_progress", node_id: "node-b", ended_at: null });
    await untilValue("node B's call marked alive after the kill", async () => (await callRow(onB.id)).updated_at > ownCall.updated_at);
    expect((await acct.api(b.baseUrl, "POST", `/v1/calls/${onB.id}/end`)).body.status).toBe("completed");
    expect(await ledgerOf(onB.id)).toEqual([-1]);
    // Nothing closed twice, however many beats passed.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (const { id } of onA) expect(await ledgerOf(id)).toEqual([-1]);
  }, 90_000);
});
