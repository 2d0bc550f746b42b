import { existsSync, statSync } from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { sql, type Kysely, type Transaction } from "kysely";
import { migrateToLatest, openDatabase } from "../db/database.js";
import { openPostgres } from "../db/postgres.js";
import type { Database } from "../db/schema.js";
import { UsageError } from "./args.js";
import { openElsewhere } from "./database-backup.js";
import { isPostgresUrl } from "../config.js";

/** Rows per INSERT at most; fewer for wide tables, within PostgreSQL's 65,535 parameters a statement. */
const BATCH_ROWS = 1000;
const MAX_PARAMETERS = 65_535;

/** The migrator's own bookkeeping: the target has its own, written by its migrations. */
const MIGRATOR_TABLE = /^kysely_migration/;
/** SQLite's full-text index of knowledge passages (FTS5 and its shadow tables): PostgreSQL indexes kb_passages itself. */
const SQLITE_SEARCH_TABLES = /^kb_passages_fts/;

/**
 * Tables PostgreSQL keeps with triggers on another table (migration 015): not copied, the copied
 * rows of that table build them, and they are checked against a count of the source's rows.
 */
const TRIGGER_BUILT: Record<string, string> = { call_counts: "calls" };

export interface MigrateToPostgresReport {
  from: string;
  /** The target without its password. */
  to: string;
  /** Rows in each table of the target after the copy (the same as in the source, checked). */
  rows: Record<string, number>;
  /** What PostgreSQL's triggers built instead of copying. */
  rebuilt: string[];
  /** events.seq's largest value, the same in both (null: no events). */
  events_max_seq: number | null;
  ms: number;
}

/** A table as both databases have it. */
interface TablePlan {
  name: string;
  columns: string[];
  /** PostgreSQL's type of each column (information_schema's data_type). */
  types: Map<string, string>;
  /** Its primary key's columns: how a refused row is named. */
  key: string[];
}

/**
 * `parley admin migrate-to-postgres`: copies a SQLite installation into an empty PostgreSQL
 * database. Both are first brought to this version's schema by the same migrations; then every
 * table is copied, parents before children (PostgreSQL's foreign keys give the order), in
 * batches, all in one PostgreSQL transaction: a refusal or failure at any row leaves the target
 * as empty as it was. The source is read in one SQLite read transaction (one consistent
 * snapshot) and never written past its migrations. The counts are compared before the commit.
 */
export async function migrateToPostgres(from: string, to: string, progress: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<MigrateToPostgresReport> {
  const started = Date.now();
  const source = path.resolve(from);
  checkSource(source);
  if (!isPostgresUrl(to)) throw new UsageError("--to must be a PostgreSQL URL such as postgres://parley:password@db.example:5432/parley");
  if (openElsewhere(source) === true) {
    throw new UsageError(`${source} is open in another process (parley serve or an admin command): stop it first; what it wrote after the copy would be lost`);
  }

  // An older installation: its schema first, as parley serve would on start-up.
  const upgrade = openDatabase(source);
  try {
    await migrateToLatest(upgrade);
  } finally {
    await upgrade.destroy();
  }

  const reader = new SQLite(source, { fileMustExist: true });
  reader.pragma("busy_timeout = 5000");
  reader.pragma("query_only = ON");
  const target = openPostgres(to, { poolSize: 1 });
  try {
    await migrateToLatest(target);
    const plans = await planTables(reader, target);
    let report: Omit<MigrateToPostgresReport, "from" | "to" | "ms"> | undefined;
    await target.transaction().execute(async (trx) => {
      // Every row of data hangs off an account: no node can add one to the target meanwhile.
      await sql`LOCK TABLE accounts IN EXCLUSIVE MODE`.execute(trx);
      await refuseUnlessEmpty(trx, plans);
      reader.exec("BEGIN");
      try {
        report = await copy(reader, trx, plans, progress);
      } finally {
        reader.exec("COMMIT");
      }
    });
    return { from: source, to: withoutPassword(to), ...report!, ms: Date.now() - started };
  } finally {
    reader.close();
    await target.destroy();
  }
}

/** Refuses a source that is not an existing Parley SQLite file (openDatabase would make a new one). */
function checkSource(file: string): void {
  if (!existsSync(file)) throw new UsageError(`${file} does not exist`);
  if (!statSync(file).isFile()) throw new UsageError(`${file} is not a file`);
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
    const accounts = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'accounts'").get();
    if (!accounts) throw new UsageError(`${file} is not a Parley database (it has no accounts table)`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${file} cannot be read as a SQLite database: ${(err as Error).message}`);
  } finally {
    db?.close();
  }
}

/** The tables to copy, in an order their foreign keys allow; refused when the two schemas differ. */
async function planTables(reader: SQLite.Database, target: Kysely<Database>): Promise<TablePlan[]> {
  const sourceTables = (reader.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>)
    .map((t) => t.name)
    .filter((t) => !MIGRATOR_TABLE.test(t) && !SQLITE_SEARCH_TABLES.test(t));
  const { rows: columns } = await sql<{ table_name: string; column_name: string; data_type: string }>`
    SELECT table_name, column_name, data_type FROM information_schema.columns
    WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`.execute(target);
  const { rows: keys } = await sql<{ table_name: string; column_name: string }>`
    SELECT tc.table_name, kcu.column_name FROM information_schema.table_constraints tc
    JOIN information_schema.key_column_usage kcu
      ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema AND kcu.table_name = tc.table_name
    WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = current_schema() ORDER BY kcu.ordinal_position`.execute(target);
  const { rows: references } = await sql<{ child: string; parent: string }>`
    SELECT child.relname AS child, parent.relname AS parent FROM pg_constraint k
    JOIN pg_class child ON child.oid = k.conrelid JOIN pg_class parent ON parent.oid = k.confrelid
    WHERE k.contype = 'f' AND child.relnamespace = current_schema()::regnamespace`.execute(target);

  const targetTables = new Set(columns.map((c) => c.table_name).filter((t) => !MIGRATOR_TABLE.test(t)));
  const missing = sourceTables.filter((t) => !targetTables.has(t));
  const extra = [...targetTables].filter((t) => !sourceTables.includes(t));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`the two schemas differ after their migrations (only in SQLite: ${missing.join(", ") || "none"}; only in PostgreSQL: ${extra.join(", ") || "none"})`);
  }
  const plans = new Map<string, TablePlan>();
  for (const name of sourceTables) {
    const types = new Map(columns.filter((c) => c.table_name === name).map((c) => [c.column_name, c.data_type]));
    const sourceColumns = (reader.prepare(`PRAGMA table_info(${quote(name)})`).all() as Array<{ name: string }>).map((c) => c.name);
    const differ = sourceColumns.length !== types.size || sourceColumns.some((c) => !types.has(c));
    if (differ) throw new Error(`table ${name} has other columns in SQLite (${sourceColumns.join(", ")}) than in PostgreSQL (${[...types.keys()].join(", ")})`);
    plans.set(name, { name, columns: sourceColumns, types, key: keys.filter((k) => k.table_name === name).map((k) => k.column_name) });
  }
  return copyOrder(plans, references);
}

/** Parents before children; ties in name order, so every run copies in the same order. */
function copyOrder(plans: Map<string, TablePlan>, references: Array<{ child: string; parent: string }>): TablePlan[] {
  const ordered: TablePlan[] = [];
  const done = new Set<string>();
  const pending = [...plans.keys()].sort();
  while (pending.length > 0) {
    const next = pending.findIndex((t) => references.every((r) => r.child !== t || r.parent === t || done.has(r.parent) || !plans.has(r.parent)));
    if (next === -1) throw new Error(`the foreign keys between ${pending.join(", ")} form a cycle: no order copies them`);
    const [name] = pending.splice(next, 1);
    done.add(name!);
    ordered.push(plans.get(name!)!);
  }
  return ordered;
}

/** No merging: the target must hold no account (nor anything else) before the copy. */
async function refuseUnlessEmpty(trx: Transaction<Database>, plans: TablePlan[]): Promise<void> {
  for (const plan of plans) {
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(plan.name)}`.execute(trx);
    const n = Number(rows[0]!.n);
    if (n === 0) continue;
    const what = plan.name === "accounts" ? `${n} account${n === 1 ? "" : "s"}` : `${n} row${n === 1 ? "" : "s"} in ${plan.name}`;
    throw new UsageError(`the PostgreSQL database already holds data (${what}): migrate-to-postgres copies into an empty database only and does not merge; give a new database`);
  }
}

/** Copies every table and compares the result before the transaction commits. */
async function copy(reader: SQLite.Database, trx: Transaction<Database>, plans: TablePlan[], progress: (line: string) => void) {
  // Read in the one snapshot the caller's read transaction holds.
  const totals = new Map(plans.map((p) => [p.name, (reader.prepare(`SELECT count(*) AS n FROM ${quote(p.name)}`).get() as { n: number }).n]));
  const sourceMaxSeq = (reader.prepare("SELECT max(seq) AS seq FROM events").get() as { seq: number | null }).seq;
  const sourceCounts = reader.prepare("SELECT account_id, direction, status, count(*) AS n FROM calls GROUP BY account_id, direction, status").all() as CallCount[];

  const rebuilt: string[] = [];
  for (const plan of plans) {
    const total = totals.get(plan.name)!;
    if (TRIGGER_BUILT[plan.name]) {
      rebuilt.push(plan.name);
      continue;
    }
    const batchRows = Math.max(1, Math.min(BATCH_ROWS, Math.floor(MAX_PARAMETERS / plan.columns.length)));
    let copied = 0;
    let batch: Record<string, unknown>[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      await trx.insertInto(plan.name as keyof Database).values(batch as never).execute();
      copied += batch.length;
      batch = [];
      progress(`migrate-to-postgres: ${plan.name} ${copied}/${total}`);
    };
    for (const row of reader.prepare(`SELECT * FROM ${quote(plan.name)}`).iterate() as Iterable<Record<string, unknown>>) {
      checkRow(plan, row);
      batch.push(row);
      if (batch.length >= batchRows) await flush();
    }
    await flush();
    if (total === 0) progress(`migrate-to-postgres: ${plan.name} 0/0`);
  }

  const rows: Record<string, number> = {};
  for (const plan of plans) {
    const { rows: counted } = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(plan.name)}`.execute(trx);
    rows[plan.name] = Number(counted[0]!.n);
    if (!TRIGGER_BUILT[plan.name] && rows[plan.name] !== totals.get(plan.name)) {
      throw new Error(`${plan.name} has ${rows[plan.name]} rows in PostgreSQL after the copy, ${totals.get(plan.name)} in SQLite: nothing was copied`);
    }
  }
  const { rows: maxSeq } = await sql<{ seq: number | null }>`SELECT max(seq) AS seq FROM events`.execute(trx);
  const targetMaxSeq = maxSeq[0]?.seq === null || maxSeq[0]?.seq === undefined ? null : Number(maxSeq[0].seq);
  if (targetMaxSeq !== sourceMaxSeq) throw new Error(`events.seq reaches ${targetMaxSeq} in PostgreSQL after the copy, ${sourceMaxSeq} in SQLite: nothing was copied`);
  if (rebuilt.includes("call_counts")) {
    const { rows: targetCounts } = await sql<CallCount>`SELECT account_id, direction, status, n FROM call_counts WHERE n <> 0`.execute(trx);
    if (countKey(targetCounts) !== countKey(sourceCounts)) throw new Error("call_counts built by PostgreSQL's triggers differ from the calls counted in SQLite: nothing was copied");
  }
  return { rows, rebuilt, events_max_seq: targetMaxSeq };
}

interface CallCount {
  account_id: string;
  direction: string;
  status: string;
  n: number;
}

function countKey(counts: CallCount[]): string {
  return counts.map((c) => `${c.account_id}\t${c.direction}\t${c.status}\t${Number(c.n)}`).sort().join("\n");
}

/**
 * Refuses a value PostgreSQL cannot take as it is, naming the table, the column and the row (by
 * its primary key), never the value: text holding U+0000 (PostgreSQL's text cannot; the API
 * refuses it now, an older database may hold one), or a value of another type than the column's
 * (SQLite keeps what it is given), which PostgreSQL would refuse without saying which row.
 */
function checkRow(plan: TablePlan, row: Record<string, unknown>): void {
  for (const column of plan.columns) {
    const value = row[column];
    if (value === null) continue;
    const type = plan.types.get(column);
    let problem: string | undefined;
    if (typeof value === "string" && value.includes("\u0000")) problem = "holds the character U+0000 (NUL), which PostgreSQL's text cannot hold";
    else if (type === "text" && typeof value !== "string") problem = `holds a ${typeof value} where PostgreSQL keeps text`;
    else if ((type === "bigint" || type === "integer" || type === "smallint") && !(typeof value === "number" && Number.isSafeInteger(value))) problem = `holds ${typeof value === "number" ? "a fraction or an integer past 2^53" : `a ${typeof value}`} where PostgreSQL keeps an integer`;
    else if (type === "double precision" && typeof value !== "number") problem = `holds a ${typeof value} where PostgreSQL keeps a number`;
    if (problem) {
      const id = plan.key.length > 0 ? plan.key.map((k) => `${k} ${String(row[k])}`).join(", ") : "(no primary key)";
      throw new UsageError(`${plan.name}.${column} of the row with ${id} ${problem}: correct or remove it in the SQLite file, then run again; nothing was copied`);
    }
  }
}

/** A SQLite identifier, quoted (table names come from sqlite_master). */
function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The URL as it may be printed: without its password. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    return u.toString();
  } catch {
    return "(the PostgreSQL URL)";
  }
}
