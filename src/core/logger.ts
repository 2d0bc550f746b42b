import { pino, type Logger } from "pino";
import type { LogLevel } from "../config.js";

/** JSON logs on stdout; credentials never reach them. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: "parley" },
    redact: { paths: ["req.headers.authorization", "*.authorization", "*.key", "*.secret", "*.signing_secret", "*.media_token"], censor: "[redacted]" },
  });
}
