#!/usr/bin/env node
import { ConfigError, loadConfig } from "../config.js";
import { logLineScrubber } from "../core/log-scrub.js";
import { StartupError } from "../core/startup-error.js";
import { openMigratedDatabase } from "../main.js";
import { admin, ADMIN_USAGE } from "./admin.js";
import { providers, PROVIDERS_USAGE } from "./providers.js";
import { serve } from "./serve.js";
import { talk, TALK_USAGE } from "./talk.js";
import { UsageError } from "./args.js";
import { usageFor, wantsHelp } from "./help.js";

const SERVE_USAGE = `parley serve

Starts the service: the API, the web console, the media endpoints and (unless PARLEY_SIP_PORT=0)
SIP, configured by PARLEY_* variables or parley.config.json (see docs/configuration.md).
Stops gracefully on SIGTERM or SIGINT; docs/operating.md covers running it as a service.`;

const MIGRATE_USAGE = `parley migrate

Creates the database under the data directory (PARLEY_DATA_DIR) or upgrades it, then exits.`;

const USAGE = `Usage: parley <command>   (parley <command> --help for one command)

  serve              start the service (what npm start runs)
  migrate            create or upgrade the database, then exit
  admin ...          accounts, API keys, credits and numbers (parley admin for the list)
  talk ...           talk to an agent from this terminal (see below)
  providers          the speech and language providers, their settings and the chains in use

The latency benchmark is npm run bench (npm run bench -- --help), outside the service's command.

Configuration: PARLEY_* environment variables or parley.config.json (see docs/configuration.md).

${ADMIN_USAGE}

${TALK_USAGE}`;

/** The usage of the command `argv` names; undefined for an unknown command. */
function helpFor(command: string, rest: string[]): string | undefined {
  if (command === "serve") return SERVE_USAGE;
  if (command === "migrate") return MIGRATE_USAGE;
  if (command === "admin") return usageFor(ADMIN_USAGE, rest);
  if (command === "talk") return TALK_USAGE;
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
      await serve();
      return -1;
    case "migrate": {
      const config = loadConfig();
      const db = await openMigratedDatabase(config);
      await db.destroy();
      process.stdout.write(`database ready in ${config.dataDir}\n`);
      return 0;
    }
    case "admin":
      return admin(rest, loadConfig());
    case "providers":
      return providers(rest, loadConfig());
    case "talk":
      try {
        return await talk(rest);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        process.stderr.write(`parley ${command}: ${err.message}\n`);
        return 2;
      }
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
    const known = err instanceof ConfigError || err instanceof StartupError;
    const message = err instanceof Error ? err.message : String(err);
    // Where an unexpected error came from, for PARLEY_LOG_LEVEL=debug; a known one says it all.
    const where = err instanceof Error && !known ? err.stack : undefined;
    // Scrubbed as log lines are: an unexpected error's message may quote a number or a token.
    process.stderr.write(logLineScrubber()(`parley: ${where ? `${message} (PARLEY_LOG_LEVEL=debug shows where)` : message}\n${debug && where ? `${where}\n` : ""}`));
    process.exit(err instanceof ConfigError ? 78 : 1);
  },
);
