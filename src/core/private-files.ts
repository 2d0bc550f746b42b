import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * The data directory holds the database, the signing secret and the recordings: only the
 * service's user may read them. New directories are made 0700 and new files 0600; what an
 * older installation left readable by others is tightened at start-up rather than refused.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) owner-only, or takes group and others' access away from an existing one. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir);
}

/** Takes group and others' access away from `file`; a missing file is left missing. */
export function tightenFile(file: string): void {
  tighten(file);
}

/** Tightens `dir` and the files directly in it, when it exists. */
export function tightenDirAndFiles(dir: string): void {
  if (!tighten(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isFile()) tighten(path.join(dir, entry.name));
}

/**
 * Writes `content` to a new owner-only `file` unless the file exists already, without a window
 * where another process could read it half-written: the content goes to a temporary file first,
 * then is linked into place, which fails if the name is taken. When several processes race, one
 * file wins and every process then reads that one.
 */
export function createPrivateFileOnce(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temporary, content, { mode: PRIVATE_FILE_MODE, flag: "wx" });
  try {
    linkSync(temporary, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    unlinkSync(temporary);
  }
}

/** Keeps the owner's bits only; false when `target` does not exist. */
function tighten(target: string): boolean {
  let mode: number;
  try {
    mode = statSync(target).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
  if ((mode & 0o077) !== 0) chmodSync(target, mode & 0o700);
  return true;
}
