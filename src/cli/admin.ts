import { CARRIERS, PLANS, RETENTION_MAX_DAYS, type CarrierName, type Config, type Plan, type PlanLimits } from "../config.js";
import type { Db } from "../db/database.js";
import { openMigratedDatabase } from "../main.js";
import { ApiError, type FieldProblem } from "../core/api-error.js";
import { isE164 } from "../core/e164.js";
import { PHONE_NUMBER_STATUSES, type PhoneNumberRecord, type PhoneNumberStatus } from "../db/repositories/phone-numbers.js";
import { presentPhoneNumber } from "../http/presenters/phone-number.js";
import { createPhoneNumberBody } from "../http/schemas/phone-numbers.js";
import { parsePart } from "../http/validation.js";
import { createServices, type Services } from "../services/container.js";
import { LIMIT_KEYS } from "../services/accounts.js";
import { integer, parseOptions, parseOptionsAndTarget, required, UsageError } from "./args.js";
import { print } from "./output.js";
import { backupDatabase, restoreDatabase } from "./database-backup.js";
import { migrateToPostgres } from "./migrate-to-postgres.js";
import { findTwilioNumber, pointAtParley, twilioNumberSetup } from "./twilio-number-setup.js";
import { ADMIN_USAGE } from "./usage.js";

export { ADMIN_USAGE };

type Handler = (argv: string[], s: Services) => Promise<unknown>;

async function accountOrFail(s: Services, id: string) {
  const account = await s.accounts.find(id);
  if (!account) throw new UsageError(`no account ${id}`);
  return account;
}

function plan(value: string): Plan {
  if (!(PLANS as readonly string[]).includes(value)) throw new UsageError(`--plan must be one of ${PLANS.join(", ")}`);
  return value as Plan;
}

const LIMIT_FLAGS: Record<(typeof LIMIT_KEYS)[number], string> = {
  requestsPerMinute: "requests-per-minute",
  agents: "agents",
  webhooks: "webhooks",
  concurrentCalls: "concurrent-calls",
  queuedCalls: "queued-calls",
};

/** The `number add` flag for each API field, so errors name what the user typed. */
const NUMBER_FLAGS: Record<string, string> = {
  phone_number: "--number",
  country: "--country",
  region: "--region",
  friendly_name: "--friendly-name",
  default_agent_id: "--agent",
};

/** An API error as a CLI usage error: field problems name the flag, others keep their code. */
function usageErrorOf(err: ApiError): UsageError {
  const problem = (err.details?.fields as FieldProblem[] | undefined)?.[0];
  const flag = problem && NUMBER_FLAGS[problem.field];
  return new UsageError(flag ? `${flag} ${problem.message}` : `${err.message} (${err.code})`);
}

/** Runs an operator's step, reporting its API error (a conflict, an unknown number) as a usage error. */
async function asOperator<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof ApiError) throw usageErrorOf(err);
    throw err;
  }
}

/** A number as the operator sees it: its account, approval, and who else holds it active. */
async function operatorView(s: Services, n: PhoneNumberRecord) {
  const holder = n.status === "active" ? undefined : await s.phoneNumbers.activeHolderOf(n.phone_number);
  return {
    id: n.id,
    account_id: n.account_id,
    phone_number: n.phone_number,
    country: n.country,
    carrier: n.carrier ?? s.config.carrier,
    status: n.status,
    approved_at: n.approved_at,
    active_in_account: holder ?? null,
    created_at: n.created_at,
  };
}

/**
 * The number `number approve|reject` names: its id, or an E.164 number that has exactly one row
 * in one of `statuses` (narrowed by --account).
 */
async function targetNumber(s: Services, target: string, accountId: string | undefined, statuses: readonly PhoneNumberStatus[]): Promise<PhoneNumberRecord> {
  if (!isE164(target)) {
    const found = await s.phoneNumbers.find(target);
    if (!found || (accountId !== undefined && found.account_id !== accountId)) throw new UsageError(`no phone number ${target}${accountId ? ` in account ${accountId}` : ""}`);
    return found;
  }
  const rows = (await s.phoneNumbers.listAll({ phoneNumber: target, accountId })).filter((n) => statuses.includes(n.status));
  const where = `${target}${accountId ? ` in account ${accountId}` : ""}`;
  if (rows.length === 0) throw new UsageError(`no ${statuses.join(" or ")} ${where} (parley admin number list --number ${target} shows its rows)`);
  if (rows.length > 1) throw new UsageError(`${rows.length} accounts have ${where} (${rows.map((n) => `${n.id} in ${n.account_id}`).join(", ")}): give the number's id or --account`);
  return rows[0]!;
}

/** `--carrier`: one of CARRIERS; absent, null (the number follows PARLEY_CARRIER). */
function carrier(value: string | undefined): CarrierName | null {
  if (value === undefined) return null;
  if (!(CARRIERS as readonly string[]).includes(value)) throw new UsageError(`--carrier must be one of ${CARRIERS.join(", ")}`);
  return value as CarrierName;
}

function status(value: string | undefined): PhoneNumberStatus | undefined {
  if (value !== undefined && !(PHONE_NUMBER_STATUSES as readonly string[]).includes(value)) throw new UsageError(`--status must be one of ${PHONE_NUMBER_STATUSES.join(", ")}`);
  return value as PhoneNumberStatus | undefined;
}

const COMMANDS: Record<string, Handler> = {
  "account create": async (argv, s) => {
    const o = parseOptions(argv, { name: { type: "string" }, plan: { type: "string" }, credits: { type: "string" }, json: { type: "boolean" } });
    const account = await s.accounts.create({ name: required(o, "name"), plan: plan(required(o, "plan")), credits: integer(o.credits, "credits", 0) ?? 0 });
    return { id: account.id, name: account.name, plan: account.plan, credit_balance: account.credit_balance };
  },
  "account list": async (argv, s) => {
    parseOptions(argv, { json: { type: "boolean" } });
    return (await s.accounts.list()).map((a) => ({ id: a.id, name: a.name, plan: a.plan, credit_balance: a.credit_balance, created_at: a.created_at }));
  },
  "account show": async (argv, s) => {
    const o = parseOptions(argv, { account: { type: "string" }, json: { type: "boolean" } });
    const a = await accountOrFail(s, required(o, "account"));
    return {
      id: a.id,
      name: a.name,
      plan: a.plan,
      credit_balance: a.credit_balance,
      low_balance_threshold: s.accounts.lowBalanceThresholdOf(a),
      retention_days: s.accounts.retentionDaysOf(a),
      limits: s.accounts.limitsOf(a),
      usage: await s.accounts.usage(a.id),
    };
  },
  "account plan": async (argv, s) => {
    const o = parseOptions(argv, { account: { type: "string" }, plan: { type: "string" }, json: { type: "boolean" } });
    const a = await accountOrFail(s, required(o, "account"));
    await s.accounts.setPlan(a.id, plan(required(o, "plan")));
    return { id: a.id, plan: o.plan };
  },
  "account limits": async (argv, s) => {
    const flags = Object.fromEntries(Object.values(LIMIT_FLAGS).map((f) => [f, { type: "string" as const }]));
    const o = parseOptions(argv, { account: { type: "string" }, json: { type: "boolean" }, ...flags }) as Record<string, string | boolean | undefined>;
    const a = await accountOrFail(s, required(o, "account"));
    const overrides: Partial<Record<keyof PlanLimits, number | null>> = {};
    for (const key of LIMIT_KEYS) {
      const value = integer(o[LIMIT_FLAGS[key]] as string | undefined, LIMIT_FLAGS[key], -1);
      if (value !== undefined) overrides[key] = value === -1 ? null : value;
    }
    return { id: a.id, limits: await s.accounts.setLimits(a.id, overrides) };
  },
  "account low-balance": async (argv, s) => {
    const o = parseOptions(argv, { account: { type: "string" }, threshold: { type: "string" }, json: { type: "boolean" } });
    const a = await accountOrFail(s, required(o, "account"));
    const threshold = integer(required(o, "threshold"), "threshold", -1)!;
    return { id: a.id, low_balance_threshold: await s.accounts.setLowBalanceThreshold(a.id, threshold === -1 ? null : threshold) };
  },
  "account retention": async (argv, s) => {
    const o = parseOptions(argv, { account: { type: "string" }, days: { type: "string" }, off: { type: "boolean" }, default: { type: "boolean" }, json: { type: "boolean" } });
    const a = await accountOrFail(s, required(o, "account"));
    const given = [o.days !== undefined, o.off === true, o.default === true].filter(Boolean).length;
    if (given !== 1) throw new UsageError("give one of --days N, --off (keep for ever) or --default (PARLEY_RETENTION_DAYS)");
    // Stored: days; 0 for ever; null the default.
    const days = o.off ? 0 : o.default ? null : integer(o.days, "days", 1)!;
    if (days !== null && days > RETENTION_MAX_DAYS) throw new UsageError(`--days must be at most ${RETENTION_MAX_DAYS}`);
    return { id: a.id, retention_days: await s.accounts.setRetentionDays(a.id, days), source: days === null ? "default" : "account" };
  },
  "key create": async (argv, s) => {
    const o = parseOptions(argv, { account: { type: "string" }, name: { type: "string" }, permissions: { type: "string" }, json: { type: "boolean" } });
    const a = await accountOrFail(s, required(o, "account"));
    const permissions = o.permissions ? o.permissions.split(",").map((p) => p.trim()).filter(Boolean) : ["*"];
    try {
      const key = await s.apiKeys.create(a.id, required(o, "name"), permissions);
      return { id: key.id, key: key.key, name: key.name, permissions: key.permissions, account_id: key.account_id };
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  },
  "key list": async (argv, s) => {
    const o = parseOptions(argv, { account: { type: "string" }, json: { type: "boolean" } });
    const a = await accountOrFail(s, required(o, "account"));
    return (await s.apiKeys.list(a.id)).map((k) => ({
      id: k.id,
      name: k.name,
      prefix: k.key_prefix,
      permissions: k.permissions,
      created_at: k.created_at,
      last_used_at: k.last_used_at,
      revoked_at: k.revoked_at,
    }));
  },
  "key revoke": async (argv, s) => {
    const o = parseOptions(argv, { key: { type: "string" }, json: { type: "boolean" } });
    const id = required(o, "key");
    if (!(await s.apiKeys.revoke(id))) throw new UsageError(`no key ${id}`);
    return { id, revoked: true };
  },
  "credits add": async (argv, s) => {
    const o = parseOptions(argv, { account: { type: "string" }, amount: { type: "string" }, description: { type: "string" }, json: { type: "boolean" } });
    const a = await accountOrFail(s, required(o, "account"));
    const amount = integer(required(o, "amount"), "amount")!;
    if (amount === 0) throw new UsageError("--amount must not be 0");
    return { id: a.id, credit_balance: await s.accounts.addCredits(a.id, amount, o.description ?? null) };
  },
  "number add": async (argv, s) => {
    const o = parseOptions(argv, {
      account: { type: "string" },
      number: { type: "string" },
      country: { type: "string" },
      region: { type: "string" },
      "friendly-name": { type: "string" },
      agent: { type: "string" },
      carrier: { type: "string" },
      configure: { type: "boolean" },
      json: { type: "boolean" },
    });
    const held = carrier(o.carrier);
    if (o.configure && (held ?? s.config.carrier) !== "twilio") throw new UsageError("--configure is for Twilio numbers (--carrier twilio)");
    const twilio = o.configure ? twilioNumberSetup(s.config) : undefined;
    const a = await accountOrFail(s, required(o, "account"));
    const number = required(o, "number");
    // +1 is shared by the US, Canada and the Caribbean; the US is the common case, others say so.
    const country = o.country ?? (number.startsWith("+1") ? "US" : undefined);
    if (country === undefined && isE164(number)) throw new UsageError("--country is required for numbers outside +1 (a two-letter code like GB)");
    return asOperator(async () => {
      const input = parsePart(createPhoneNumberBody, "body", {
        phone_number: number,
        country,
        region: o.region,
        friendly_name: o["friendly-name"],
        default_agent_id: o.agent,
      });
      // Checked at Twilio before the number is added: a number Twilio does not hold would answer nothing.
      const atTwilio = twilio && (await findTwilioNumber(twilio, input.phone_number));
      const added = presentPhoneNumber(await s.phoneNumbers.add(a.id, input, held), s.config.carrier);
      return twilio && atTwilio ? { ...added, twilio: await pointAtParley(twilio, atTwilio) } : added;
    });
  },
  "number list": async (argv, s) => {
    const o = parseOptions(argv, { status: { type: "string" }, account: { type: "string" }, number: { type: "string" }, json: { type: "boolean" } });
    const rows = await s.phoneNumbers.listAll({ status: status(o.status), accountId: o.account, phoneNumber: o.number });
    return Promise.all(rows.map((n) => operatorView(s, n)));
  },
  "number approve": async (argv, s) => {
    const { values, target } = parseOptionsAndTarget(argv, { account: { type: "string" }, json: { type: "boolean" } }, "number id or +E164 number");
    const number = await targetNumber(s, target, values.account, ["pending"]);
    return operatorView(s, await asOperator(() => s.phoneNumbers.approve(number.id)));
  },
  "number reject": async (argv, s) => {
    const { values, target } = parseOptionsAndTarget(argv, { account: { type: "string" }, json: { type: "boolean" } }, "number id or +E164 number");
    const number = await targetNumber(s, target, values.account, ["pending", "active"]);
    return operatorView(s, await asOperator(() => s.phoneNumbers.reject(number.id)));
  },
};

/** The database's own commands, which are not about one account. */
const DATABASE_COMMANDS: Record<string, (argv: string[], config: Config) => Promise<unknown>> = {
  backup: async (argv, config) => {
    const o = parseOptions(argv, { to: { type: "string" }, json: { type: "boolean" } });
    const db = await openMigratedDatabase(config);
    try {
      return await backupDatabase(db, required(o, "to"));
    } finally {
      await db.destroy();
    }
  },
  restore: async (argv, config) => {
    const o = parseOptions(argv, { from: { type: "string" }, json: { type: "boolean" } });
    return restoreDatabase(config, required(o, "from"));
  },
  "migrate-to-postgres": async (argv, config) => {
    const o = parseOptions(argv, { from: { type: "string" }, to: { type: "string" }, json: { type: "boolean" } });
    const to = o.to ?? config.databaseUrl;
    if (!to) throw new UsageError("--to is required (a postgres:// URL), or set PARLEY_DATABASE_URL");
    return migrateToPostgres(required(o, "from"), to);
  },
};

/** Every `parley admin` command, as `group action` (or the one word of a database command). */
export const ADMIN_COMMANDS: readonly string[] = [...Object.keys(COMMANDS), ...Object.keys(DATABASE_COMMANDS)];

/** Runs `parley admin ...` against the configured database; returns the process exit code. */
export async function admin(argv: string[], config: Config): Promise<number> {
  const [group, action, ...rest] = argv;
  const databaseCommand = group === undefined ? undefined : DATABASE_COMMANDS[group];
  if (databaseCommand) {
    const args = argv.slice(1);
    try {
      print(await databaseCommand(args, config), args.includes("--json"));
      return 0;
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      process.stderr.write(`parley admin ${group}: ${err.message}\n`);
      return 2;
    }
  }
  const handler = COMMANDS[`${group} ${action}`];
  if (!handler) {
    process.stderr.write((group ? `unknown admin command: ${[group, action].filter(Boolean).join(" ")}\n\n` : "") + ADMIN_USAGE + "\n");
    return 2;
  }
  let db: Db | undefined;
  try {
    db = await openMigratedDatabase(config);
    const services = createServices(db, config);
    const result = await handler(rest, services);
    print(result, rest.includes("--json"));
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`parley admin ${group} ${action}: ${err.message}\n`);
      return 2;
    }
    throw err;
  } finally {
    await db?.destroy();
  }
}

