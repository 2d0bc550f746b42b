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
    const agent = await agents.create(account, { name: "A", system_prompt: "You answer.", voice_id: "flite-slt" } as never);
    const answered = "2026-01-05T10:00:00.000Z";
    const live = await insertCallRow(db, { account_id: account.id, agent_id: agent.id, direction: "inbound", status: "in_progress", answered_at: answered, updated_at: answered });
    const ringing = await insertCallRow(db, { account_id: account.id, agent_id: agent.id, status: "ringing" });
    const done = await insertCallRow(db, { account_id: account.id, agent_id: agent.id, status: "completed", duration: 30, billed_credits: 1, ended_at: answered });
    // The last heartbeat the dead process wrote: 95 s into the call.
    await db.updateTable("calls").set({ updated_at: "2026-01-05T10:01:35.000Z" }).where("id", "=", live.id).execute();
    // (what a heartbeat does to a live call, and to nothing else)
    await liveCalls.heartbeat([live.id, done.id]);
    expect((await callRow(parley, done.id)).updated_at).toBe(done.updated_at);
    expect(Date.parse((await callRow(parley, live.id)).updated_at)).toBeGreaterThan(Date.parse("2026-01-05T10:01:35.000Z"));
    await db.updateTable("calls").set({ updated_at: "2026-01-05T10:01:35.000Z" }).where("id", "=", live.id).execute();
    await parley.stop();

    parley = await start();
    const recovered = await callRow(parley, live.id);
    expect(recovered).toMatchObject({ status: "failed", duration: 95, billed_credits: 2, ended_at: "2026-01-05T10:01:35.000Z" });
    expect(await callRow(parley, ringing.id)).toMatchObject({ status: "failed", duration: null, billed_credits: null });
    expect(await callRow(parley, done.id)).toMatchObject({ status: "completed", duration: 30, billed_credits: 1 });
    const charges = await parley.services.db.selectFrom("ledger").selectAll().where("call_id", "=", live.id).execute();
    expect(charges.map((c) => c.amount)).toEqual([-2]);
    expect((await parley.services.accounts.find(account.id))!.credit_balance).toBe(48);
    await parley.stop();

    parley = await start();
    expect((await parley.services.accounts.find(account.id))!.credit_balance).toBe(48);
    // Each recovered call emitted call.failed once, across both restarts.
    const events = new EventsRepository(parley.services.db);
    for (const id of [live.id, ringing.id]) {
      const emitted = await events.forCall(id);
      expect(emitted.map((e) => [e.name, e.data.status])).toEqual([["call.failed", "failed"]]);
    }
    expect(await events.forCall(done.id)).toEqual([]);
    await parley.stop();
  });
});
