import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_USAGE } from "../../src/cli/admin.js";
import { usageFor } from "../../src/cli/help.js";
import { CallsRepository } from "../../src/db/repositories/calls.js";
import type { CallTable } from "../../src/db/schema.js";
import { startParley } from "../../src/main.js";
import { recordingsDir } from "../../src/services/recording-files.js";
import { runAdmin } from "../helpers/admin-cli.js";
import { deliveryAnswersOf, insertCallRow } from "../helpers/call-rows.js";
import { stringsInDataFiles } from "../helpers/data-file-grep.js";
import { startTestApp, type TestAccount, type TestApp } from "../helpers/test-app.js";
import { logLines } from "../helpers/log-lines.js";
import { startWebhookReceiver } from "../helpers/webhook-receiver.js";

/**
 * Retention: ended calls older than their account's retention (its own, else
 * PARLEY_RETENTION_DAYS) lose their recording, transcript and analysis to the daily pass, as
 * DELETE /v1/calls/{id} removes them; the billing record stays.
 */

const DAY_MS = 86_400_000;
const SAID = "My card number is 4111 and I live at 12 Elm Street";

let app: TestApp;
const { destination, lines: logs } = logLines();

beforeAll(async () => {
  app = await startTestApp({}, { PARLEY_RETENTION_DAYS: "30" }, pino({ level: "info" }, destination));
});
afterAll(() => app.close());

const retentionLines = () => logs.filter((l) => l.retention);

async function agentOf(account: TestAccount, on = app): Promise<string> {
  const res = await on.request("POST", "/v1/agents", { key: account.key, body: { name: "Desk", system_prompt: "p", voice_id: "flite-slt" } });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** An ended call with all its content (a recording file on disk, transcript, analysis, actions, context, and its events), ended `ageDays` ago. */
async function oldCall(account: TestAccount, agentId: string, ageDays: number, row: Partial<CallTable> = {}, on = app): Promise<CallTable & { file: string }> {
  const { db } = on.parley.services;
  const endedAt = new Date(Date.now() - ageDays * DAY_MS);
  const createdAt = new Date(endedAt.getTime() - 60_000);
  const dir = recordingsDir(on.dataDir);
  mkdirSync(dir, { recursive: true });
  const inserted = await insertCallRow(db, {
    account_id: account.id,
    agent_id: agentId,
    status: "completed",
    context: JSON.stringify({ customer_name: "Ada" }),
    transcript: JSON.stringify([{ role: "user", content: SAID, timestamp: 1 }]),
    analysis: JSON.stringify({ summary: SAID, outcome: "resolved", sentiment: "neutral", fields: {} }),
    outcome: "resolved",
    actions: JSON.stringify([{ type: "answer", text: SAID }]),
    duration: 60,
    billed_credits: 1,
    end_reason: "caller_hangup",
    answered_at: createdAt.toISOString(),
    ended_at: endedAt.toISOString(),
    created_at: createdAt.toISOString(),
    ...row,
  });
  const file = path.join(dir, `${inserted.id}.wav`);
  writeFileSync(file, "RIFF....WAVE");
  await db.updateTable("calls").set({ recording_path: file }).where("id", "=", inserted.id).execute();
  const call = (await new CallsRepository(db).findById(inserted.id))!;
  if (call.status !== "in_progress") await on.parley.services.callEvents.entered(call, "in_progress", db);
  return { ...inserted, recording_path: file, file };
}

async function stored(id: string, on = app) {
  return on.parley.services.db.selectFrom("calls").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

describe("parley admin account retention, and retention_days in GET /v1/account", () => {
  it("sets the account's own retention, keeps it for ever with --off, goes back to PARLEY_RETENTION_DAYS with --default; GET /v1/account shows the one in force", async () => {
    const acct = await app.account();
    const shown = async () => (await app.request("GET", "/v1/account", { key: acct.key })).body.retention_days;
    expect(await shown()).toBe(30);

    const set = await runAdmin(app.config, "account", "retention", "--account", acct.id, "--days", "7", "--json");
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ id: acct.id, retention_days: 7, source: "account" });
    expect(await shown()).toBe(7);
    expect(JSON.parse((await runAdmin(app.config, "account", "show", "--account", acct.id, "--json")).stdout).retention_days).toBe(7);

    const off = await runAdmin(app.config, "account", "retention", "--account", acct.id, "--off", "--json");
    expect(JSON.parse(off.stdout)).toEqual({ id: acct.id, retention_days: null, source: "account" });
    expect(await shown()).toBeNull();

    const back = await runAdmin(app.config, "account", "retention", "--account", acct.id, "--default", "--json");
    expect(JSON.parse(back.stdout)).toEqual({ id: acct.id, retention_days: 30, source: "default" });
    expect(await shown()).toBe(30);

    for (const [args, message] of [
      [["--days", "0"], "--days must be an integer >= 1"],
      [["--days", "36501"], "--days must be at most 36500"],
      [["--days", "7", "--off"], "give one of --days N, --off"],
      [[], "give one of --days N, --off"],
    ] as const) {
      const bad = await runAdmin(app.config, "account", "retention", "--account", acct.id, ...args);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(message);
    }
    expect(usageFor(ADMIN_USAGE, ["account", "retention"])).toContain("account retention --account ID --days N|--off|--default");
  });
});

describe("the retention pass", () => {
  it("removes exactly the content of ended calls past their account's retention (files, transcripts, analyses, events), keeps the billing record, logs the count per account, and a second pass removes nothing", async () => {
    const week = await app.account(); // its own: 7 days
    const usual = await app.account(); // PARLEY_RETENTION_DAYS: 30
    const forever = await app.account(); // --off
    for (const [acct, args] of [
      [week, ["--days", "7"]],
      [forever, ["--off"]],
    ] as const) {
      expect((await runAdmin(app.config, "account", "retention", "--account", acct.id, ...args)).code).toBe(0);
    }
    const [weekAgent, usualAgent, foreverAgent] = [await agentOf(week), await agentOf(usual), await agentOf(forever)];

    const weekOld = await oldCall(week, weekAgent, 8);
    const weekOlder = await oldCall(week, weekAgent, 40, { status: "failed", end_reason: "error" });
    const weekYoung = await oldCall(week, weekAgent, 6);
    // Still being analysed, and still live (a row left in_progress since long ago): left for later.
    const weekPending = await oldCall(week, weekAgent, 9, { analysis_pending: 1 });
    const weekLive = await oldCall(week, weekAgent, 9, { status: "in_progress", ended_at: null, duration: null, billed_credits: null });
    const usualOld = await oldCall(usual, usualAgent, 31);
    const usualYoung = await oldCall(usual, usualAgent, 29);
    const foreverOld = await oldCall(forever, foreverAgent, 400);

    const before = retentionLines().length;
    const pass = await app.parley.services.retention.run();
    expect(pass.removed[week.id]).toBe(2);
    expect(pass.removed[usual.id]).toBe(1);
    expect(pass.removed[forever.id]).toBeUndefined();
    expect(pass.failed).toBe(0);

    for (const call of [weekOld, weekOlder, usualOld]) {
      const row = await stored(call.id);
      expect(row).toMatchObject({ transcript: null, recording_path: null, analysis: null, outcome: null, actions: null, context: "{}" });
      // The billing record stays.
      expect(row).toMatchObject({ status: call.status, duration: call.duration, billed_credits: call.billed_credits, ended_at: call.ended_at, end_reason: call.end_reason });
      expect(existsSync(call.file)).toBe(false);
      const events = await app.parley.services.db.selectFrom("events").select("data").where("call_id", "=", call.id).execute();
      expect(events.length).toBeGreaterThan(0);
      expect(JSON.stringify(events)).not.toContain("4111");
    }
    for (const call of [weekYoung, weekPending, weekLive, usualYoung, foreverOld]) {
      const row = await stored(call.id);
      expect(row.transcript).toContain(SAID);
      expect(row.recording_path).toBe(call.file);
      expect(existsSync(call.file)).toBe(true);
    }
    // What the API shows of a removed call: no content, its bill.
    const shown = (await app.request("GET", `/v1/calls/${weekOld.id}?include=transcript,recording,analysis`, { key: week.key })).body;
    expect(shown).toMatchObject({ status: "completed", duration: 60, transcript: [], recording_url: null, analysis: null });

    const lines = retentionLines().slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, msg: `retention: removed the content of ${pass.total} ended calls`, retention: { removed: pass.removed, total: pass.total, failed: 0 } });
    expect(lines[0]!.retention.removed).toMatchObject({ [week.id]: 2, [usual.id]: 1 });

    // Nothing more to do.
    const again = await app.parley.services.retention.run();
    expect(again.total).toBe(0);
    expect(again.removed).toMatchObject({ [week.id]: 0, [usual.id]: 0 });
    expect(retentionLines().at(-1)).toMatchObject({ msg: "retention: removed the content of 0 ended calls", retention: { total: 0 } });

    // Once its analysis is written, the pending call goes on the next pass.
    await app.parley.services.db.updateTable("calls").set({ analysis_pending: 0 }).where("id", "=", weekPending.id).execute();
    const later = await app.parley.services.retention.run();
    expect(later.removed[week.id]).toBe(1);
    expect((await stored(weekPending.id)).transcript).toBeNull();
    expect(existsSync(weekPending.file)).toBe(false);
  });

  it("reads more than one batch of calls in a pass", async () => {
    const busy = await app.account();
    await runAdmin(app.config, "account", "retention", "--account", busy.id, "--days", "1");
    const agent = await agentOf(busy);
    const calls = [];
    for (let i = 0; i < 230; i++) calls.push(await oldCall(busy, agent, 2 + i / 1000));
    const pass = await app.parley.services.retention.run();
    expect(pass.removed[busy.id]).toBe(230);
    const left = await app.parley.services.db.selectFrom("calls").select("id").where("account_id", "=", busy.id).where("transcript", "is not", null).execute();
    expect(left).toEqual([]);
    expect(calls.filter((c) => existsSync(c.file))).toEqual([]);
  });
});

describe("what the pass leaves in the data files", () => {
  it("nothing of the removed content (freed space and WAL included), nor its copies: the campaign contact's context, the receivers' answers, an expired web call token's context", async () => {
    const { db } = app.parley.services;
    // Strings that occur nowhere else in this file's database.
    const SAID = "Zebulon Quaxworth wants the blue crown"; // transcript
    const SUMMARY = "Sapphire walrus summary"; // analysis
    const TOOL_ARG = "Obsidian pelican 4417"; // a tool call's arguments
    const CONTEXT = "Marmaduke Fennimore"; // the call's context, copied from its campaign contact
    const ECHOED = "ZEBULON QUAXWORTH WANTS"; // what the receiver answered (the transcript in capitals)
    const TOKEN_CONTEXT = "Ignatius Wobblethorpe"; // a web call token's context, never used
    const MARKERS = [SAID, SUMMARY, TOOL_ARG, CONTEXT, ECHOED, TOKEN_CONTEXT];
    const receiver = await startWebhookReceiver();
    receiver.answer((req) => ({ status: 200, body: `got ${String(req.body?.data?.transcript ?? "").toUpperCase()}` }));
    try {
      const acct = await app.account();
      expect((await runAdmin(app.config, "account", "retention", "--account", acct.id, "--days", "7")).code).toBe(0);
      const agent = await agentOf(acct);
      expect((await app.request("POST", "/v1/webhooks", { key: acct.key, body: { url: receiver.url, events: ["*"] } })).status).toBe(201);
      // A campaign not due for years: its contact is tied to the call below by hand.
      const campaign = await app.request("POST", "/v1/campaigns", {
        key: acct.key,
        body: { name: "Later", agent_id: agent, contacts: [{ phone: "+14155550177", context: { customer_name: CONTEXT } }], settings: { schedule: "2099-01-01T00:00:00Z" } },
      });
      expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
      const contact = await db.selectFrom("campaign_contacts").select("id").where("campaign_id", "=", campaign.body.id).executeTakeFirstOrThrow();
      const call = await oldCall(acct, agent, 8, {
        campaign_id: campaign.body.id,
        contact_id: contact.id,
        context: JSON.stringify({ customer_name: CONTEXT }),
        transcript: JSON.stringify([{ role: "user", content: SAID, timestamp: 1 }]),
        analysis: JSON.stringify({ summary: SUMMARY, outcome: "resolved", sentiment: "neutral", fields: {} }),
        actions: JSON.stringify([{ type: "tool_call", name: "book_appointment", arguments: { customer_name: TOOL_ARG }, result: { ok: true } }]),
      });
      await db.updateTable("campaign_contacts").set({ call_id: call.id, status: "completed", attempts: 1 }).where("id", "=", contact.id).execute();
      // A browser call token never used, now expired.
      const token = await app.request("POST", "/v1/calls/web", { key: acct.key, body: { agent_id: agent, context: { customer_name: TOKEN_CONTEXT } } });
      expect(token.status, JSON.stringify(token.body)).toBe(201);
      await db.updateTable("web_call_tokens").set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where("call_id", "=", token.body.call_id).execute();
      for (let i = 0; i < 200 && !receiver.received.some((r) => String(r.body?.data?.transcript ?? "").includes(SAID)); i++) await new Promise((r) => setTimeout(r, 50));
      for (let i = 0; i < 200; i++) {
        const open = await db.selectFrom("deliveries").select("id").where("account_id", "=", acct.id).where("status", "in", ["pending", "sending"]).execute();
        if (open.length === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      // Before: all of it is in the files (the search works). SQLite's files only: PostgreSQL
      // keeps a removed row's bytes until VACUUM reuses its space (docs/operating.md, Several nodes).
      if (!app.onPostgres) expect(stringsInDataFiles(app.dataDir, MARKERS)).toEqual(MARKERS);

      const pass = await app.parley.services.retention.run();
      expect(pass.removed[acct.id]).toBe(1);

      expect(await stored(call.id)).toMatchObject({ transcript: null, analysis: null, actions: null, context: "{}" });
      expect((await db.selectFrom("campaign_contacts").select("context").where("id", "=", contact.id).executeTakeFirstOrThrow()).context).toBe("{}");
      expect((await app.request("GET", `/v1/campaigns/${campaign.body.id}/contacts`, { key: acct.key })).body.data[0].context).toEqual({});
      // The expired token's use is still refused as expired (the row stays an hour), without its context.
      expect((await db.selectFrom("web_call_tokens").select("context").where("call_id", "=", token.body.call_id).executeTakeFirstOrThrow()).context).toBe("{}");
      const answers = await deliveryAnswersOf(db, [call.id]);
      expect(answers.length).toBeGreaterThan(0);
      expect(answers.filter((a) => a.response_body !== null)).toEqual([]);
      if (!app.onPostgres) expect(stringsInDataFiles(app.dataDir, MARKERS)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe("when the pass runs", () => {
  it("at start-up, then every interval (PARLEY_RETENTION_INTERVAL_MS)", async () => {
    const own: Array<Record<string, any>> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) own.push(JSON.parse(line));
        done();
      },
    });
    const logger = pino({ level: "info" }, sink);
    const first = await startTestApp({}, { PARLEY_RETENTION_DAYS: "1" }, logger);
    try {
      const acct = await first.account();
      const agent = await agentOf(acct, first);
      const before = await oldCall(acct, agent, 3, {}, first);
      // The service stops and starts again on the same data: the start-up pass removes the call's content.
      await first.parley.stop();
      first.parley = await startParley({ ...first.config, retention: { days: 1, intervalMs: 1_000 } }, logger);
      const passes = () => own.filter((l) => l.retention);
      for (let i = 0; i < 100 && !passes().some((l) => l.retention.total === 1); i++) await new Promise((r) => setTimeout(r, 50));
      expect(passes().at(-1)).toMatchObject({ retention: { removed: { [acct.id]: 1 }, total: 1 } });
      expect((await stored(before.id, first)).transcript).toBeNull();
      // A call that comes of age later goes on a pass of the timer.
      const after = await oldCall(acct, agent, 2, {}, first);
      for (let i = 0; i < 100 && (await stored(after.id, first)).transcript !== null; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await stored(after.id, first)).transcript).toBeNull();
      expect(existsSync(after.file)).toBe(false);
    } finally {
      await first.close();
    }
  });
});
