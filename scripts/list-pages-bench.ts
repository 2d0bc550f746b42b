/**
 * `npm run bench:list-pages`: what reading a page of the call list costs on a large database,
 * through the covering index the list reads (calls_list, migration 013) and through the
 * (account_id, created_at, id) index it replaced. A call's row holds its transcript; a long one
 * spills onto overflow pages, which a page read through the old index walks to reach the
 * columns after it. Pages are read at random places in the list, as clients paging through a
 * big account do, so most are not in SQLite's page cache.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { sql } from "kysely";
import { integer, parseOptions, UsageError } from "../src/cli/args.js";
import { answerHelp } from "../src/cli/help.js";
import { migrateToLatest, openDatabase, type Db } from "../src/db/database.js";
import { CallsRepository } from "../src/db/repositories/calls.js";
import { summarize } from "./bench/percentiles.js";

export const LIST_PAGES_BENCH_USAGE = `npm run bench:list-pages -- [--calls N] [--transcript-chars N] [--pages N] [--json]

  --calls N              calls in the account, one a minute (default 30000)
  --transcript-chars N   characters of each call's transcript (default 8000)
  --pages N              pages of 20 read at random places, per index (default 2000)
  --json                 print the result as JSON on stdout`;

const ACCOUNT = "acct_bench";
const START = Date.parse("2026-01-01T00:00:00.000Z");
const at = (minute: number) => new Date(START + minute * 60_000).toISOString();

async function seed(db: Db, calls: number, transcriptChars: number): Promise<void> {
  const now = at(0);
  await db.insertInto("accounts").values({ id: ACCOUNT, name: "Bench", plan: "pro", credit_balance: 0, signing_secret: "whsec_bench", media_token_hash: null, media_token_created_at: null, limit_overrides: "{}", low_balance_threshold: null, retention_days: null, created_at: now, updated_at: now }).execute();
  // One transcript line of the given length, as JSON: what a long call leaves.
  const transcript = JSON.stringify([{ role: "agent", content: "x".repeat(transcriptChars), timestamp: 0.4 }]);
  await sql`
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${calls - 1})
    INSERT INTO calls (id, account_id, agent_id, direction, status, phone_number, from_number, metadata, context, record, max_duration, duration, transcript, created_at, ended_at, updated_at)
    SELECT 'call_' || printf('%010d', i), ${ACCOUNT}, 'agent_bench', 'outbound', 'completed', '+1415555' || printf('%04d', i % 10000), '+16505550100',
      '{"customer_id":"cus_' || i || '"}', '{}', 1, 600, 42, ${transcript},
      strftime('%Y-%m-%dT%H:%M:%fZ', ${START / 1000}, 'unixepoch', '+' || i || ' minutes'),
      strftime('%Y-%m-%dT%H:%M:%fZ', ${START / 1000}, 'unixepoch', '+' || i || ' minutes', '+42 seconds'),
      strftime('%Y-%m-%dT%H:%M:%fZ', ${START / 1000}, 'unixepoch', '+' || i || ' minutes')
    FROM n`.execute(db);
  await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
}

/** Reads `pages` pages of 20 after random calls of the list; their read times in µs. */
async function readPages(db: Db, calls: number, pages: number): Promise<number[]> {
  const repository = new CallsRepository(db);
  const times: number[] = [];
  for (let i = 0; i < pages; i++) {
    const minute = Math.floor(Math.random() * calls);
    const after = { createdAt: at(minute), id: `call_${String(minute).padStart(10, "0")}` };
    const started = performance.now();
    const page = await repository.page(ACCOUNT, {}, { limit: 20, order: "desc", after });
    times.push((performance.now() - started) * 1000);
    if (page.rows.length === 0 && minute > 0) throw new Error(`no page after call ${minute}`);
  }
  return times;
}

export async function listPagesBench(argv: string[]): Promise<void> {
  const o = parseOptions(argv, { calls: { type: "string" }, "transcript-chars": { type: "string" }, pages: { type: "string" }, json: { type: "boolean" } });
  const calls = integer(o.calls, "calls", 100) ?? 30_000;
  const transcriptChars = integer(o["transcript-chars"], "transcript-chars", 0) ?? 8_000;
  const pages = integer(o.pages, "pages", 1) ?? 2_000;
  const dir = mkdtempSync(path.join(os.tmpdir(), "parley-list-pages-"));
  const file = path.join(dir, "parley.db");
  const db = openDatabase(file);
  try {
    await migrateToLatest(db);
    process.stderr.write(`bench:list-pages: writing ${calls} calls with ${transcriptChars}-character transcripts\n`);
    await seed(db, calls, transcriptChars);
    const databaseBytes = statSync(file).size;
    const results: Array<{ index: string; covering: boolean; us: ReturnType<typeof summarize> }> = [];
    const measure = async (index: string, covering: boolean) => {
      process.stderr.write(`bench:list-pages: reading ${pages} pages through ${index}\n`);
      await readPages(db, calls, Math.min(pages, 200)); // warm-up: statements prepared, code compiled
      results.push({ index, covering, us: summarize(await readPages(db, calls, pages)) });
    };
    await measure("calls_list", true);
    await sql`DROP INDEX calls_list`.execute(db);
    await sql`CREATE INDEX calls_account_created ON calls (account_id, created_at, id)`.execute(db);
    await measure("calls_account_created", false);
    if (o.json === true) {
      process.stdout.write(JSON.stringify({ calls, transcript_chars: transcriptChars, pages, database_bytes: databaseBytes, results }, null, 2) + "\n");
      return;
    }
    const mb = (databaseBytes / 1e6).toFixed(0);
    const fmt = (n: number | null) => (n === null ? "-" : n.toFixed(0));
    process.stdout.write(
      [
        `Call list pages of 20 at random places: ${calls} calls with ${transcriptChars}-character transcripts (database ${mb} MB), ${pages} pages per index`,
        ``,
        `| index | covering | mean µs | p50 µs | p95 µs | p99 µs |`,
        `|---|---|---|---|---|---|`,
        ...results.map((r) => `| ${r.index} | ${r.covering ? "yes" : "no"} | ${fmt(r.us.mean)} | ${fmt(r.us.p50)} | ${fmt(r.us.p95)} | ${fmt(r.us.p99)} |`),
        ``,
      ].join("\n"),
    );
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

answerHelp(process.argv.slice(2), LIST_PAGES_BENCH_USAGE);
listPagesBench(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(err instanceof UsageError ? `bench:list-pages: ${err.message}\n\n${LIST_PAGES_BENCH_USAGE}\n` : `bench:list-pages: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
