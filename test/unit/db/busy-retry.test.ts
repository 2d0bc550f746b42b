import SQLite from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { retryWhileBusy } from "../../../src/db/busy-retry.js";

const busy = () => new SQLite.SqliteError("database is locked", "SQLITE_BUSY");

describe("retryWhileBusy", () => {
  it("runs the statement again while the database is busy, then gives its result", () => {
    let tries = 0;
    const result = retryWhileBusy(() => {
      if (++tries < 3) throw busy();
      return "wal";
    });
    expect(result).toBe("wal");
    expect(tries).toBe(3);
  });

  it("throws any other error at once", () => {
    let tries = 0;
    const corrupt = new SQLite.SqliteError("database disk image is malformed", "SQLITE_CORRUPT");
    expect(() =>
      retryWhileBusy(() => {
        tries++;
        throw corrupt;
      }),
    ).toThrow(corrupt);
    expect(tries).toBe(1);
  });

  it("gives up with the busy error once the time is spent", () => {
    let tries = 0;
    expect(() =>
      retryWhileBusy(() => {
        tries++;
        throw busy();
      }, 100),
    ).toThrow("database is locked");
    expect(tries).toBeGreaterThan(1);
  });
});
