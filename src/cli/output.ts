/** Prints a result as JSON (for scripts) or as aligned `key: value` lines (for people). */
export function print(result: unknown, json: boolean): void {
  if (json) {
    process.stdout.write(JSON.stringify(result, null, 2) + "\n");
    return;
  }
  const rows = Array.isArray(result) ? result : [result];
  for (const [i, row] of rows.entries()) {
    if (i > 0) process.stdout.write("\n");
    if (row === null || typeof row !== "object") {
      process.stdout.write(String(row) + "\n");
      continue;
    }
    const entries = Object.entries(row as Record<string, unknown>);
    const width = Math.max(...entries.map(([k]) => k.length));
    for (const [k, v] of entries) {
      process.stdout.write(`${k.padEnd(width)}  ${typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}\n`);
    }
  }
}
