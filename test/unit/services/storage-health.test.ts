import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { STORAGE_FAILURE_WINDOW_MS, StorageHealth, storageProblem } from "../../../src/services/storage-health.js";
import { logLines } from "../../helpers/log-lines.js";

function health() {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const { destination, lines } = logLines();
  const storage = new StorageHealth({ logger: pino({ level: "info" }, destination), now: () => now });
  return { storage, lines, advance: (ms: number) => (now += ms) };
}

const enospc = { message: "ENOSPC: no space left on device, write", code: "ENOSPC" };
const full = { message: "database or disk is full", code: "SQLITE_FULL" };

describe("StorageHealth", () => {
  it("counts failures by target and is failing from a failure until a write of the same kind succeeds", () => {
    const { storage } = health();
    expect(storage.failing()).toEqual([]);
    storage.failed("recording", enospc, { call_id: "call_a" });
    storage.failed("recording", enospc, { call_id: "call_b" });
    expect(storage.counts()).toEqual({ recording: 2, database: 0 });
    expect(storage.failing()).toEqual([{ target: "recording", at: "2026-01-01T00:00:00.000Z", code: "ENOSPC", message: enospc.message }]);
    // A database write does not clear the recordings' failure: the recordings directory may be another disk.
    storage.succeeded("database");
    expect(storage.failing()).toHaveLength(1);
    storage.succeeded("recording");
    expect(storage.failing()).toEqual([]);
    // The count stays: it is since start-up.
    expect(storage.counts()).toEqual({ recording: 2, database: 0 });
  });

  it("stops counting against readiness a window after the last failure, when nothing has written since", () => {
    const { storage, advance } = health();
    storage.failed("database", full);
    advance(STORAGE_FAILURE_WINDOW_MS - 1);
    expect(storage.failing().map((f) => f.target)).toEqual(["database"]);
    advance(1);
    expect(storage.failing()).toEqual([]);
    // Still full: the next failure makes it failing again.
    storage.failed("database", full);
    expect(storage.failing().map((f) => f.target)).toEqual(["database"]);
  });

  it("logs each recording failure with its call, database failures one line per 10 s with the number held back, and the recovery once", () => {
    const { storage, lines, advance } = health();
    storage.failed("recording", enospc, { call_id: "call_a" });
    storage.failed("recording", enospc, { call_id: "call_b" });
    for (let i = 0; i < 5; i++) storage.failed("database", full);
    advance(10_000);
    storage.failed("database", full);
    storage.succeeded("database");
    storage.succeeded("database");
    expect(lines.map(({ level, msg, storage: target, call_id, code, failures, held_back }) => ({ level, msg, target, call_id, code, failures, held_back }))).toEqual([
      { level: 50, msg: "storage write failed: recording (ENOSPC)", target: "recording", call_id: "call_a", code: "ENOSPC", failures: 1, held_back: undefined },
      { level: 50, msg: "storage write failed: recording (ENOSPC)", target: "recording", call_id: "call_b", code: "ENOSPC", failures: 2, held_back: undefined },
      { level: 50, msg: "storage write failed: database (SQLITE_FULL)", target: "database", call_id: undefined, code: "SQLITE_FULL", failures: 1, held_back: undefined },
      { level: 50, msg: "storage write failed: database (SQLITE_FULL)", target: "database", call_id: undefined, code: "SQLITE_FULL", failures: 6, held_back: 4 },
      { level: 30, msg: "storage writes succeed again: database", target: "database", call_id: undefined, code: undefined, failures: 6, held_back: undefined },
    ]);
  });

  it("says what failed, when last, and what to do", () => {
    const { storage, advance } = health();
    storage.failed("recording", enospc);
    advance(5_000);
    storage.failed("database", full);
    expect(storageProblem(storage.failing(), "/srv/parley")).toBe(
      "disk full or failing: recording writes (ENOSPC) and database writes (SQLITE_FULL) failed, the last at 2026-01-01T00:00:05.000Z; free space on the disk of /srv/parley",
    );
  });
});
