import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { startParley, type Parley } from "../../src/main.js";
import { EventsRepository } from "../../src/db/repositories/events.js";
import { insertCallRow } from "../helpers/call-rows.js";

// A process that dies leaves its live calls `in_progress`; the next start closes them, once.

const dataDir = mkdtempSync(path.join(os.tmpdir(), "parley-recovery-"));
const config = loadConfig({
  env: { PARLEY_ENGINE: "0", PARLEY_SIP_PORT: "0" },
  cwd: dataDir,
  overrides: { port: 0, host: "127.0.0.1", dataDir, logLevel: "silent" },
});
const start = () => startParley(config, pino({ level: "silent" }));

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function callRow(parley: Parley, id: string) {
  return parley.services.db.selectFrom("calls").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

describe("restart recovery", () => {
  it("closes calls left live as failed, billed to their last heartbeat, exactly once", async () => {
    let parley = await start();
    const { accounts, agents, db, liveCalls } = parley.services;
    const account = await accounts.create({ name: "Crashy", plan: "pro", credits: 50 });
    const agent = await agents.create(account, { name: "A", system_prompt: "You answer.", voice_id: "flite-slt" } as never, ["*"]);
    const answered = "2026-01-05T10:00:00.000Z";
    const live = await insertCallRow(db, { account_id: account.id, agent_id: agent.id, direction: "inbound", status: "in_progress", answered_at: answered, updated_at: answered });
    const ringing = await insertCallRow(db, { account_id: account.id, agent_id: agent.id, status: "ringing" });
    const done = await insertCallRow(db, { account_id: account.id, agent_id: agent.id, status: "completed", duration: 30, billed_credits: 1, ended_at: answered });
    // The last heartbeat the dead process wrote: 95 s into the call.
    await db.updateTable("calls").set({ updated_at: "2026-01-05T10:01:35.000Z" }).where("id", "=", live.id).execute();
    // (what a heartbeat does to a live call, and to nothing else: marks it alive and stores its transcript so far)
    const said = [
      { role: "agent" as const, content: "Hello, how can I help?", timestamp: 0.2 },
      { role: "user" as const, content: "what are your opening hours", timestamp: 3.1 },
    ];
    await liveCalls.heartbeat([
      { id: live.id, transcript: said },
      { id: done.id, transcript: [{ role: "user", content: "not stored", timestamp: 1 }] },
    ]);
    expect(await callRow(parley, done.id)).toMatchObject({ updated_at: done.updated_at, transcript: null });
    expect(Date.parse((await callRow(parley, live.id)).updated_at)).toBeGreaterThan(Date.parse("2026-01-05T10:01:35.000Z"));
    // A later heartbeat with nothing said yet keeps what is stored.
    await liveCalls.heartbeat([{ id: live.id, transcript: [] }]);
    expect(JSON.parse((await callRow(parley, live.id)).transcript!)).toEqual(said);
    await db.updateTable("calls").set({ updated_at: "2026-01-05T10:01:35.000Z" }).where("id", "=", live.id).execute();
    await parley.stop();

    parley = await start();
    const recovered = await callRow(parley, live.id);
    expect(recovered).toMatchObject({ status: "failed", duration: 95, billed_credits: 2, ended_at: "2026-01-05T10:01:35.000Z" });
    expect(JSON.parse(recovered.transcript!)).toEqual(said);
    expect(await callRow(parley, ringing.id)).toMatchObject({ status: "failed", duration: null, billed_credits: null });
    expect(await callRow(parley, done.id)).toMatchObject({ status: "completed", duration: 30, billed_credits: 1 });
    const charges = await parley.services.db.selectFrom("ledger").selectAll().where("call_id", "=", live.id).execute();
    expect(charges.map((c) => c.amount)).toEqual([-2]);
    expect((await parley.services.accounts.find(account.id))!.credit_balance).toBe(48);
    await parley.stop();

    parley = await start();
    expect((await parley.services.accounts.find(account.id))!.credit_balance).toBe(48);
    // Each recovered call emitted its end events once, across both restarts.
    const events = new EventsRepository(parley.services.db);
    const emitted = async (id: string) => (await events.forCall(id)).map((e) => [e.name, e.data.status]);
    expect(await emitted(live.id)).toEqual([["call.failed", "failed"], ["call.transcript.ready", "failed"]]);
    expect(await emitted(ringing.id)).toEqual([["call.failed", "failed"]]);
    expect(await events.forCall(done.id)).toEqual([]);
    await parley.stop();
  });
});
