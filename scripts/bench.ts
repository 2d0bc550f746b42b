/** `npm run bench`: the latency benchmark. */
import { UsageError } from "../src/cli/args.js";
import { answerHelp } from "../src/cli/help.js";
import { bench, BENCH_USAGE } from "./bench/run-bench.js";

answerHelp(process.argv.slice(2), BENCH_USAGE);
bench(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(err instanceof UsageError ? `bench: ${err.message}\n\n${BENCH_USAGE}\n` : `bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
