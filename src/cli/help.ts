/** Whether a command line asks for help (`--help` or `-h` anywhere in it). */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

/**
 * The part of a usage text about one command: its header line, then the entries (a line
 * indented by two spaces, with its deeper-indented continuation lines) whose words start with
 * `words` (`["key", "create"]` gives `key create ...`). The whole text when none match.
 */
export function usageFor(usage: string, words: readonly string[]): string {
  const [header, ...lines] = usage.split("\n");
  const entries: string[][] = [];
  for (const line of lines) {
    if (/^ {2}\S/.test(line)) entries.push([line]);
    else if (/^ {3,}\S/.test(line) && entries.length > 0) entries.at(-1)!.push(line);
  }
  const prefix = words.filter((w) => !w.startsWith("-")).join(" ");
  const matching = entries.filter((entry) => prefix !== "" && `${entry[0]!.trim()} `.startsWith(`${prefix} `));
  return matching.length > 0 ? [header, "", ...matching.flat()].join("\n") : usage;
}

/**
 * A script's `--help`: prints `usage` and exits 0 before the script does anything. For the
 * npm scripts, which have no other entry than their command line.
 */
export function answerHelp(argv: readonly string[], usage: string): void {
  if (!wantsHelp(argv)) return;
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
