import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../../engine/index.js";

const MODULE = pathToFileURL(path.join(packageRoot(import.meta.url), "dist/src/core/process-error-handlers.js")).href;

/** Runs `body` in a fresh Node process with the handlers installed and a JSON logger on stdout. */
function runWithHandlers(body: string) {
  const script = `
    import { pino } from "pino";
    import { installProcessErrorHandlers } from ${JSON.stringify(MODULE)};
    installProcessErrorHandlers(pino());
    ${body}
  `;
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: packageRoot(import.meta.url), encoding: "utf8", timeout: 20_000 });
  const lines = result.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } });
  return { status: result.status, lines, stdout: result.stdout };
}

describe("process error handlers", () => {
  it("log a stray rejected promise with its error and keep the process (and its live calls) running", () => {
    const run = runWithHandlers(`
      Promise.reject(new Error("stray failure"));
      setTimeout(() => console.log(JSON.stringify({ level: 30, msg: "still running" })), 50);
    `);
    expect(run.status).toBe(0);
    expect(run.lines.map((l) => l.msg)).toEqual(["unhandled promise rejection (the process goes on)", "still running"]);
    expect(run.lines[0]).toMatchObject({ level: 50, err: { message: "stray failure" } });
  });

  it("log an uncaught exception as fatal and exit non-zero", () => {
    const run = runWithHandlers(`setTimeout(() => { throw new Error("broken state"); }, 0);`);
    expect(run.status).toBe(1);
    expect(run.lines).toEqual([expect.objectContaining({ level: 60, msg: "uncaught exception: exiting", err: expect.objectContaining({ message: "broken state" }) })]);
  });
});
