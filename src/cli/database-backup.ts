import {
  chmodSync,
  closeSync,
  constants as fsConstants,
  copyFileSync,
  existsSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import { sql } from "kysely";
import type { Config } from "../config.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../core/private-files.js";
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
 * what the database holds (key hashes, signing secrets), so `to` must be a new name: any
 * existing path (a file, even an empty one, a directory, a symbolic link, dangling or not) is
 * refused, and the file is created exclusively without following links, owner-only
 * whatever the umask, before a byte is written.
 *
 * `VACUUM INTO` opens its target by name, and SQLite would follow whatever the name is by
 * then: someone who can write the target's directory could swap it for a link between our
 * create and SQLite's open. So SQLite writes into a fresh directory of its own inside the
 * (owner-only) data directory, and the bytes are copied from there into the descriptor
 * opened here: the only name used outside the data directory is the one created exclusively.
 */
export async function backupDatabase(db: Db, to: string): Promise<BackupReport> {
  const file = path.resolve(to);
  const target = createExclusively(file);
  const started = Date.now();
  let staging: string | undefined;
  try {
    staging = mkdtempSync(path.join(await dataDirectory(db), ".backup-"));
    // mkdtemp asks for 0700, less the umask: SQLite must be able to create files in it.
    chmodSync(staging, PRIVATE_DIR_MODE);
    const copy = path.join(staging, "parley-backup.db");
    await sql`VACUUM INTO ${copy}`.execute(db);
    copyInto(copy, target);
    fsyncSync(target);
  } catch (err) {
    closeSync(target);
    // Ours: created exclusively above. Unlinking a name never follows it; a failure here must not hide `err`.
    try {
      rmSync(file, { force: true });
    } catch {
      // left for the operator: the error below says what went wrong
    }
    throw err;
  } finally {
    if (staging) rmSync(staging, { recursive: true, force: true });
  }
  const bytes = fstatSync(target).size;
  closeSync(target);
  return { file, bytes, ms: Date.now() - started };
}

/** Opens a new owner-only `file` for writing: refused (a UsageError naming it) when anything exists at that name. */
function createExclusively(file: string): number {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fsConstants;
  let fd: number;
  try {
    // O_EXCL fails on any existing name, a symbolic link included (dangling or not); O_NOFOLLOW says so twice.
    fd = openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, PRIVATE_FILE_MODE);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ELOOP") throw new UsageError(`${file} exists${kindOf(file)}: give a new file name`);
    if (code === "ENOENT" || code === "ENOTDIR") throw new UsageError(`${path.dirname(file)} is not an existing directory`);
    throw err;
  }
  // The umask may have taken bits away from the mode asked for: owner read and write, exactly.
  fchmodSync(fd, PRIVATE_FILE_MODE);
  return fd;
}

/** What is at an existing `file`, for the refusal (the refusal itself comes from the exclusive open, not from this look). */
function kindOf(file: string): string {
  try {
    const st = lstatSync(file);
    if (st.isSymbolicLink()) return " (a symbolic link)";
    if (st.isDirectory()) return " (a directory)";
    if (st.isFile() && st.size === 0) return " (an empty file)";
    return "";
  } catch {
    return "";
  }
}

/** The directory of the database's file: the data directory, owner-only (openDatabase makes it so). */
async function dataDirectory(db: Db): Promise<string> {
  const { rows } = await sql<{ name: string; file: string }>`PRAGMA database_list`.execute(db);
  const main = rows.find((r) => r.name === "main")?.file;
  if (!main) throw new Error("the database has no file to back up beside");
  return path.dirname(main);
}

/** Copies the whole of `source` into the open descriptor `target`, a chunk at a time (a database may be larger than memory). */
function copyInto(source: string, target: number): void {
  const from = openSync(source, "r");
  try {
    const chunk = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const read = readSync(from, chunk, 0, chunk.length, null);
      if (read === 0) return;
      for (let written = 0; written < read; ) written += writeSync(target, chunk, written, read - written);
    }
  } finally {
    closeSync(from);
  }
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
export function openElsewhere(file: string): boolean | undefined {
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
