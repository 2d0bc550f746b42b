import { describe, expect, it } from "vitest";
import path from "node:path";
import { packageRoot } from "../../engine/index.js";
import { runNodeScript } from "../../scripts/parley-process.js";

// The large-database list measurement runs through both indexes and reads every page it asks
// for (its figures are those of docs/api-throughput.md; no timing is asserted here).

describe("npm run bench:list-pages", () => {
  it("reads the pages through the covering index, then through the index it replaced, and reports both as JSON", async () => {
    const result = await runNodeScript(path.join(packageRoot(import.meta.url), "dist/scripts/list-pages-bench.js"), ["--calls", "300", "--transcript-chars", "5000", "--pages", "30", "--json"], {}, { killAfterMs: 110_000 });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ calls: 300, transcript_chars: 5000, pages: 30 });
    // 300 transcripts of 5,000 characters are on the database's pages: over 1.5 MB.
    expect(report.database_bytes).toBeGreaterThan(1_500_000);
    expect(report.results.map((r: any) => [r.index, r.covering])).toEqual([
      ["calls_list", true],
      ["calls_account_created", false],
    ]);
    for (const r of report.results) expect(r.us.n).toBe(30);
  }, 120_000);

  it("refuses a bad option with its usage and exit code 2", async () => {
    const result = await runNodeScript(path.join(packageRoot(import.meta.url), "dist/scripts/list-pages-bench.js"), ["--calls", "ten"], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("npm run bench:list-pages");
  });
});
