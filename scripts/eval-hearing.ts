/** `npm run eval:hearing`: what the embedded recognizer hears of speech it was not built around. */
import { UsageError } from "../src/cli/args.js";
import { answerHelp } from "../src/cli/help.js";
import { evaluateHearing, HEARING_USAGE, hearingOptions, hearingTable } from "./eval/hearing-eval.js";

const argv = process.argv.slice(2);
answerHelp(argv, HEARING_USAGE);
(async () => {
  const options = hearingOptions(argv);
  const report = await evaluateHearing(options, (line) => process.stderr.write(`${line}\n`));
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${hearingTable(report)}\n`);
})().catch((err: unknown) => {
  process.stderr.write(err instanceof UsageError ? `eval:hearing: ${err.message}\n\n${HEARING_USAGE}\n` : `eval:hearing: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
});
