// The CLI's usage texts, apart from the commands: \`parley --help\` and \`parley <command> --help\`
// answer without loading the service or the engine (about 1.5 s of imports).

import { CARRIERS } from "../core/carrier-names.js";

export const ADMIN_USAGE = `parley admin <command> [options]   (add --json for machine-readable output)

  account create --name NAME --plan pro|agency [--credits N]
  account list
  account show --account ID
  account plan --account ID --plan pro|agency
  account limits --account ID [--requests-per-minute N] [--agents N] [--webhooks N]
                 [--concurrent-calls N] [--queued-calls N]       (a value of -1 clears the override)
  account low-balance --account ID --threshold N   (credits.low below N; --threshold=-1: the default)
  account retention --account ID --days N|--off|--default
                 (ended calls' recordings, transcripts and analyses are removed N days after
                  the call; --off: kept for ever; --default: PARLEY_RETENTION_DAYS)
  key create --account ID --name NAME [--permissions a,b,...]    (default: *)
  key list --account ID
  key revoke --key KEY_ID
  credits add --account ID --amount N [--description TEXT]
  number add --account ID --number +E164 [--country US] [--region CA] [--friendly-name NAME]
             [--agent AGENT_ID] [--carrier ${CARRIERS.join("|")}] [--configure]
             (active at once; without --carrier: the default, PARLEY_CARRIER;
             --configure: a Twilio number's voice URL is set at Twilio to this service)
  number list [--status pending|active|inactive] [--account ID] [--number +E164]
  number approve NUMBER_ID|+E164 [--account ID]     (a claim made with the API becomes active)
  number reject NUMBER_ID|+E164 [--account ID]      (a claim or an active number becomes inactive)
  backup --to FILE        (a consistent copy of the database, made while the service runs)
  restore --from FILE     (with parley serve stopped: the backup replaces the database)
  migrate-to-postgres --from FILE [--to postgres://...]   (default --to: PARLEY_DATABASE_URL)
                 (with parley serve stopped: copies a SQLite database into an empty
                  PostgreSQL one, in one transaction, and checks the row counts)`;

export const TALK_USAGE = `parley talk --agent AGENT_ID [--url http://localhost:8080] [--key KEY]
            [--input caller.wav] [--output heard.wav] [--wait-ms 2500]

Talks to an agent over the native media protocol (/media/ws): your microphone (sox's rec)
and your speakers (sox's play), or --input to speak a WAV file and --output to write what
the agent said. Without a working player (no sound device, sox not installed) the call goes
on without sound and says so once on stderr. The key comes from --key or PARLEY_API_KEY.`;

export const TEST_USAGE = `parley test FILE.json --agent AGENT_ID [--url http://localhost:8080] [--key KEY]
            [--timeout-s 600] [--json]

Runs the agent's test scenarios (FILE.json: {"scenarios": [...]}, the body of
POST /v1/agents/{id}/test-runs, sent as it is), prints each scenario's progress on stderr as
it finishes, then PASS, FAIL or ERROR per scenario, with a failed one's expectations (expected
and seen) and transcript; --json prints the final test run object instead. Exit code 0 when
the run passed, 1 when it failed, 2 on an error (the run's, the API's, a usage mistake, or
--timeout-s seconds passed: the run goes on, its id is printed). The key comes from --key or
PARLEY_API_KEY.`;

export const PROVIDERS_USAGE = `parley providers [--json]

Lists the speech and language providers by stage (asr, llm, tts), with the chain this
configuration uses and each provider's settings: variable, default and meaning (a credential's
value is never shown, only whether it is set). See docs/engines.md.`;

export const SERVE_USAGE = `parley serve

Starts the service: the API, the web console, the media endpoints and (unless PARLEY_SIP_PORT=0)
SIP, configured by PARLEY_* variables or parley.config.json (see docs/configuration.md).
Stops gracefully on SIGTERM or SIGINT; docs/operating.md covers running it as a service.`;

export const MIGRATE_USAGE = `parley migrate

Creates the database under the data directory (PARLEY_DATA_DIR) or upgrades it, then exits.`;

export const USAGE = `Usage: parley <command>   (parley <command> --help for one command)

  serve              start the service (what npm start runs)
  migrate            create or upgrade the database, then exit
  admin ...          accounts, API keys, credits and numbers (parley admin for the list)
  talk ...           talk to an agent from this terminal (see below)
  test FILE.json ... run an agent's test scenarios through the API (see below)
  providers          the speech and language providers, their settings and the chains in use

The latency benchmark is npm run bench (npm run bench -- --help), outside the service's command.

Configuration: PARLEY_* environment variables or parley.config.json (see docs/configuration.md).

${ADMIN_USAGE}

${TALK_USAGE}

${TEST_USAGE}`;
