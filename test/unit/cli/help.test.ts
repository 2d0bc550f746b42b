import { describe, expect, it } from "vitest";
import { ADMIN_COMMANDS, ADMIN_USAGE } from "../../../src/cli/admin.js";
import { usageFor, wantsHelp } from "../../../src/cli/help.js";

describe("--help", () => {
  it("is asked for by --help or -h anywhere on the line", () => {
    expect(wantsHelp(["key", "create", "--help"])).toBe(true);
    expect(wantsHelp(["-h"])).toBe(true);
    expect(wantsHelp(["key", "create", "--name", "help"])).toBe(false);
  });

  it("gives every admin command its own usage: the header and its entry with its continuation lines", () => {
    for (const command of ADMIN_COMMANDS) {
      const usage = usageFor(ADMIN_USAGE, [...command.split(" "), "--help"]);
      const entries = usage.split("\n").slice(2).filter((line) => /^ {2}\S/.test(line));
      expect(entries, command).toHaveLength(1);
      expect(`${entries[0]!.trim()} `.startsWith(`${command} `), command).toBe(true);
    }
    expect(usageFor(ADMIN_USAGE, ["account", "limits"])).toContain("--concurrent-calls N");
  });

  it("gives a group's commands for a group, and the whole text for no or an unknown command", () => {
    const keys = usageFor(ADMIN_USAGE, ["key", "--help"]);
    expect(keys).toContain("key create");
    expect(keys).toContain("key revoke");
    expect(keys).not.toContain("account create");
    expect(usageFor(ADMIN_USAGE, ["--help"])).toBe(ADMIN_USAGE);
    expect(usageFor(ADMIN_USAGE, ["frobnicate", "--help"])).toBe(ADMIN_USAGE);
  });
});
