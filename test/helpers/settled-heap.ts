import v8 from "node:v8";
import { runInNewContext } from "node:vm";

// The test process runs without --expose-gc; the flag can still be turned on at run time and
// the collector reached from a fresh context.
v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The heap in use after full collections: what is really held, not garbage waiting for the collector. */
export function settledHeapBytes(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
