import { loadConfig, type Config } from "../config.js";
import { installProcessErrorHandlers } from "../core/process-error-handlers.js";
import { startParley, type Parley } from "../main.js";
import { writeServicePid } from "../core/service-pid.js";

/** `parley serve`: runs the service until SIGTERM or SIGINT, then drains and exits. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  // The signal handlers come first: a signal during start-up stops the service as soon as it
  // has started, and one sent right after the banner below is never met by Node's default
  // action (killed at once, exit code null) before they exist.
  let parley: Parley | undefined;
  let pending: string | undefined;
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) {
      parley?.logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    if (parley) stop(parley, config, signal);
    else pending = signal;
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));

  parley = await startParley(config);
  // Read by `parley admin restore`, which must not replace the database under a running service.
  writeServicePid(config.dataDir);
  const { logger } = parley;
  installProcessErrorHandlers(logger);
  if (pending) return stop(parley, config, pending);
  const base = config.baseUrl;
  logger.info({ port: parley.http.port, data_dir: config.dataDir }, "parley started");
  process.stderr.write(
    [
      ``,
      `Parley is listening on ${config.host}:${parley.http.port}`,
      `  API:       ${base}/v1   (OpenAPI: ${base}/v1/openapi.json)`,
      `  Console:   ${base}/console   (sign in with an API key)`,
      `  Health:    ${base}/healthz, ${base}/readyz`,
      `  Data:      ${config.dataDir}`,
      `Get an API key:`,
      `  npx parley admin account create --name "My company" --plan pro --credits 100`,
      `  npx parley admin key create --account <account id printed above> --name dev`,
      ``,
    ].join("\n") + "\n",
  );
}

/** Drains and stops the service, then exits (1 when the grace period runs out or stopping fails). */
function stop(parley: Parley, config: Config, signal: string): void {
  const { logger } = parley;
  logger.info({ signal, grace_ms: config.shutdownGraceMs }, "shutting down");
  const timer = setTimeout(() => {
    logger.error("shutdown grace period over: exiting");
    process.exit(1);
  }, config.shutdownGraceMs + 5_000);
  timer.unref();
  parley
    .stop({ graceMs: config.shutdownGraceMs })
    .then(() => {
      logger.info("stopped");
      process.exit(0);
    })
    .catch((err: unknown) => {
      logger.error({ err }, "error while stopping");
      process.exit(1);
    });
}
