#!/usr/bin/env node
import { logLineScrubber } from "../core/log-scrub.js";
import { StartupError } from "../core/startup-error.js";
import { UsageError } from "./args.js";
import { usageFor, wantsHelp } from "./help.js";
import { ADMIN_USAGE, MIGRATE_USAGE, PROVIDERS_USAGE, SERVE_USAGE, TALK_USAGE, TEST_USAGE, USAGE } from "./usage.js";

// Each command's modules are loaded when it runs: the service and the engine take over a second
// to import, which help and a mistyped command need not wait for.




/** The usage of the command `argv` names; undefined for an unknown command. */
function helpFor(command: string, rest: string[]): string | undefined {
  if (command === "serve") return SERVE_USAGE;
  if (command === "migrate") return MIGRATE_USAGE;
  if (command === "admin") return usageFor(ADMIN_USAGE, rest);
  if (command === "talk") return TALK_USAGE;
  if (command === "test") return TEST_USAGE;
  if (command === "providers") return PROVIDERS_USAGE;
  return undefined;
}

async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Answered before anything is read or opened (configuration, database).
  const help = command !== undefined && wantsHelp(rest) ? helpFor(command, rest) : undefined;
  if (help !== undefined) {
    process.stdout.write(`${help}\n`);
    return 0;
  }
  switch (command) {
    case "serve":
      await (await import("./serve.js")).serve();
      return -1;
    case "migrate": {
      const config = (await import("../config.js")).loadConfig();
      const db = await (await import("../main.js")).openMigratedDatabase(config);
      await db.destroy();
      process.stdout.write(`database ready in ${config.dataDir}\n`);
      return 0;
    }
    case "admin":
      return (await import("./admin.js")).admin(rest, (await import("../config.js")).loadConfig());
    case "providers":
      return (await import("./providers.js")).providers(rest, (await import("../config.js")).loadConfig());
    case "talk":
      try {
        return await (await import("./talk.js")).talk(rest);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        process.stderr.write(`parley ${command}: ${err.message}\n`);
        return 2;
      }
    case "test":
      return (await import("./test-command.js")).testCommand(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE + "\n");
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command: ${command}\n\n${USAGE}\n`);
      return 2;
  }
}

run(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    // One line saying what failed and how to fix it; then out at once, whatever was left
    // running (a failed start has closed what it opened, but nothing may keep the process up).
    const debug = process.env.PARLEY_LOG_LEVEL === "debug" || process.env.PARLEY_LOG_LEVEL === "trace";
    // By name: the configuration module is loaded only by the commands that read it.
    const configError = err instanceof Error && err.name === "ConfigError";
    const known = configError || err instanceof StartupError;
    const message = err instanceof Error ? err.message : String(err);
    // Where an unexpected error came from, for PARLEY_LOG_LEVEL=debug; a known one says it all.
    const where = err instanceof Error && !known ? err.stack : undefined;
    // Scrubbed as log lines are: an unexpected error's message may quote a number or a token.
    process.stderr.write(logLineScrubber()(`parley: ${where ? `${message} (PARLEY_LOG_LEVEL=debug shows where)` : message}\n${debug && where ? `${where}\n` : ""}`));
    process.exit(configError ? 78 : 1);
  },
);
