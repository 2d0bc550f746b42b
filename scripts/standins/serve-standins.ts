/**
 * Runs the cloud stand-ins (see standin-server.ts) as their own process, so the benchmark can
 * measure their CPU apart from the service's and its own. Prints `{"url": ...}` once listening.
 *   node dist/scripts/standins/serve-standins.js [--port 0] [--asr-final-ms 150] [--llm-first-token-ms 300]
 *        [--llm-token-ms 15] [--tts-first-byte-ms 200]
 */
import { parseArgs } from "node:util";
import { DEFAULT_STANDIN_DELAYS, startStandinServer, type StandinDelays } from "./standin-server.js";

const OPTIONS = {
  port: "port",
  "asr-final-ms": "asrFinalMs",
  "llm-first-token-ms": "llmFirstTokenMs",
  "llm-token-ms": "llmTokenMs",
  "tts-first-byte-ms": "ttsFirstByteMs",
} as const;

function main(): Promise<void> {
  const { values } = parseArgs({ options: Object.fromEntries(Object.keys(OPTIONS).map((k) => [k, { type: "string" }])) as Record<keyof typeof OPTIONS, { type: "string" }> });
  const delays: StandinDelays = { ...DEFAULT_STANDIN_DELAYS };
  let port = 0;
  for (const [flag, field] of Object.entries(OPTIONS) as Array<[keyof typeof OPTIONS, (typeof OPTIONS)[keyof typeof OPTIONS]]>) {
    const raw = values[flag];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--${flag} must be an integer from 0 to 65535`);
    if (field === "port") port = n;
    else delays[field] = n;
  }
  return startStandinServer(delays, port).then((server) => {
    process.stdout.write(JSON.stringify({ url: server.url, delays }) + "\n");
    const stop = () => void server.close().then(() => process.exit(0));
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`serve-standins: ${(err as Error).message}\n`);
  process.exit(2);
});
