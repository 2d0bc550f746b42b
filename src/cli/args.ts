import { parseArgs, type ParseArgsConfig } from "node:util";

/** A mistake in how a command was called: printed with the usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

/** Parses `--flag value` options strictly; unknown flags are usage errors. */
export function parseOptions<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Like parseOptions, plus exactly one positional argument (`number approve <id or number>`), named `what` in errors. */
export function parseOptionsAndTarget<O extends Options>(argv: string[], options: O, what: string) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.positionals.length !== 1) throw new UsageError(`give one ${what}${parsed.positionals.length > 1 ? `, not ${parsed.positionals.join(" ")}` : ""}`);
  return { values: parsed.values, target: parsed.positionals[0]! };
}

export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

export function integer(value: string | undefined, name: string, min = Number.MIN_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} must be an integer${min > Number.MIN_SAFE_INTEGER ? ` >= ${min}` : ""}`);
  return Number(value);
}
