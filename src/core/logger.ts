import { pino, type Logger } from "pino";
import type { LogLevel } from "../config.js";

/**
 * JSON logs on stdout; credentials never reach them. Lines are written asynchronously: a line
 * logged while the previous write is under way joins the next write, so a busy service makes
 * one write per batch of request lines instead of one blocking write per request (a slow
 * reader of stdout, such as a full pipe to journald, no longer stalls requests). An idle
 * service still writes each line at once. Lines not yet written when the process exits (even
 * by process.exit) are written synchronously on the way out; a SIGKILL can lose the last few.
 */
export function createLogger(level: LogLevel): Logger {
  return pino(
    {
      level,
      base: { service: "parley" },
      redact: { paths: ["req.headers.authorization", "*.authorization", "*.key", "*.secret", "*.signing_secret", "*.media_token"], censor: "[redacted]" },
    },
    pino.destination({ dest: 1, sync: false }),
  );
}
