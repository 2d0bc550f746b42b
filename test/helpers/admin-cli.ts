import { vi } from "vitest";
import { admin } from "../../src/cli/admin.js";
import type { Config } from "../../src/config.js";

export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `parley admin ...` in-process against `config`'s data directory, capturing what it prints. */
export async function runAdmin(config: Config, ...args: string[]): Promise<AdminRun> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await admin(args, config);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}
