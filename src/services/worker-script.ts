import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { packageRoot } from "../../engine/package-root.js";

/*
 * Where a worker thread's script is, the way the session workers find theirs
 * (engine/workers/session-worker-pool.ts): beside the caller when it runs from dist/, and when it
 * runs from its TypeScript source (tests under vitest, which a Worker cannot load) dist/'s copy,
 * refused when older than any source it imports so a test never runs yesterday's code. Only the
 * worker's own imports are compared, not a whole folder: other parts of the tree change without
 * touching it.
 */

/** The compiled `file` (e.g. "./document-reader-worker.js") beside `moduleUrl`, the caller's import.meta.url. */
export function workerScript(moduleUrl: string, file: string): URL {
  if (!moduleUrl.endsWith(".ts")) return new URL(file, moduleUrl);
  const source = fileURLToPath(new URL(file.replace(/\.js$/, ".ts"), moduleUrl));
  const root = packageRoot(moduleUrl);
  const built = path.join(root, "dist", path.relative(root, source)).replace(/\.ts$/, ".js");
  const builtAt = statSync(built, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const newest = newestImport(source);
  if (builtAt < newest.mtimeMs) {
    throw new Error(`the worker runs the built ${built}, which is ${builtAt ? "older than" : "missing, and needed for"} ${path.relative(root, newest.file)}: run npm run build`);
  }
  return pathToFileURL(built);
}

/** Relative module specifiers (`from "./x.js"`, `import("./x.js")`) in a TypeScript source. */
const RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)\.js["']/g;

/** The most recently changed TypeScript file among `source` and everything it imports, relatively, in the package. */
function newestImport(source: string): { file: string; mtimeMs: number } {
  let newest = { file: source, mtimeMs: 0 };
  const seen = new Set<string>();
  const pending = [source];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const mtimeMs = statSync(file).mtimeMs;
    if (mtimeMs > newest.mtimeMs) newest = { file, mtimeMs };
    for (const match of readFileSync(file, "utf8").matchAll(RELATIVE_IMPORT)) {
      pending.push(path.resolve(path.dirname(file), `${match[1]!}.ts`));
    }
  }
  return newest;
}
