import { chmodSync, closeSync, copyFileSync, existsSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import type { Config } from "../config.js";
import { PRIVATE_FILE_MODE } from "../core/private-files.js";
import { migrateToLatest, openDatabase, type Db } from "../db/database.js";
import { databaseFile } from "../main.js";
import { runningService } from "../core/service-pid.js";
import { UsageError } from "./args.js";

export interface BackupReport {
  file: string;
  bytes: number;
  ms: number;
}

/**
 * A consistent copy of the database while the service runs (`VACUUM INTO`: one read
 * transaction, so writers go on and the copy is the database as of its start). The copy holds
 * what the database holds (key hashes, signing secrets): it is made owner-only before a byte
 * is written. Recordings and the cursor secret are files of the data directory, copied apart.
 */
export async function backupDatabase(db: Db, to: string): Promise<BackupReport> {
  const file = path.resolve(to);
  if (existsSync(file) && statSync(file).size > 0) throw new UsageError(`${file} exists: give a new file name`);
  closeSync(openSync(file, "w", PRIVATE_FILE_MODE));
  const started = Date.now();
  try {
    await sql`VACUUM INTO ${file}`.execute(db);
  } catch (err) {
    rmSync(file, { force: true });
    throw err;
  }
  return { file, bytes: statSync(file).size, ms: Date.now() - started };
}

export interface RestoreReport {
  from: string;
  database: string;
  applied: string[];
}

/**
 * Puts a backup in place of the data directory's database: checked first (a SQLite file whose
 * integrity check passes, with Parley's schema), copied beside the database, then renamed over
 * it (the old one's WAL files removed), then upgraded to this version's schema. Refused while
 * another process has the database open (`parley serve` would go on writing to the file it has
 * open): SQLite's own lock says so (see openElsewhere), whatever the pid file says; the pid
 * file only names the process, or decides when the database is too damaged to lock.
 */
export async function restoreDatabase(config: Config, from: string): Promise<RestoreReport> {
  const source = path.resolve(from);
  if (!existsSync(source)) throw new UsageError(`${source} does not exist`);
  const target = databaseFile(config);
  const pid = runningService(config.dataDir);
  const open = openElsewhere(target);
  if (open === true || (open === undefined && pid !== undefined)) {
    const who = pid === undefined ? "parley serve or an admin command" : `parley serve is process ${pid} by its pid file`;
    throw new UsageError(`${target} is open in another process (${who}): stop it first, then restore`);
  }
  checkBackup(source);
  const staging = `${target}.restoring`;
  rmSync(staging, { force: true });
  // Copied, not read into memory (a database may be larger than it); the data directory is owner-only.
  copyFileSync(source, staging);
  chmodSync(staging, PRIVATE_FILE_MODE);
  for (const leftover of [`${target}-wal`, `${target}-shm`]) rmSync(leftover, { force: true });
  renameSync(staging, target);
  const db = openDatabase(target);
  try {
    const { applied } = await migrateToLatest(db);
    return { from: source, database: target, applied };
  } finally {
    await db.destroy();
  }
}

/**
 * Whether another process has the database open. Every connection to a WAL database holds a
 * shared lock on its file while it is open, idle or not, so an exclusive lock (exclusive locking
 * mode, BEGIN EXCLUSIVE, no waiting) is refused then and granted otherwise. Undefined when the
 * file cannot be read as a database (damaged: what a restore may be for).
 */
function openElsewhere(file: string): boolean | undefined {
  if (!existsSync(file)) return false;
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(file, { fileMustExist: true, timeout: 0 });
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("ROLLBACK");
    return false;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" ? true : undefined;
  } finally {
    db?.close();
  }
}

/** A readable SQLite file with Parley's tables, passing SQLite's integrity check; a UsageError saying what is wrong otherwise. */
function checkBackup(file: string): void {
  let backup: SQLite.Database;
  try {
    backup = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new UsageError(`${file} is not a database Parley can read: ${(err as Error).message}`);
  }
  try {
    const integrity = backup.pragma("integrity_check", { simple: true });
    if (integrity !== "ok") throw new UsageError(`${file} fails SQLite's integrity check: ${String(integrity)}`);
    const tables = new Set((backup.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name));
    for (const table of ["kysely_migration", "accounts", "calls"]) {
      if (!tables.has(table)) throw new UsageError(`${file} is not a Parley backup (no ${table} table)`);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${file} is not a database Parley can read: ${(err as Error).message}`);
  } finally {
    backup.close();
  }
}
