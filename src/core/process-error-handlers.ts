import type { Logger } from "pino";

/**
 * Last-resort handlers for errors that escaped every call and request. A rejected promise
 * nobody awaited is logged and the process goes on: ending it would drop every live call for
 * one forgotten `.catch`. An uncaught exception leaves the process in an unknown state, so it
 * is logged and the process exits (a service manager restarts it; start-up recovery closes
 * the calls it left).
 */
export function installProcessErrorHandlers(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  process.on("unhandledRejection", (reason: unknown) => {
    logger.error({ err: reason }, "unhandled promise rejection (the process goes on)");
  });
  process.on("uncaughtException", (err: Error) => {
    logger.fatal({ err }, "uncaught exception: exiting");
    exit(1);
  });
}
