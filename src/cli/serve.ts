import { loadConfig } from "../config.js";
import { installProcessErrorHandlers } from "../core/process-error-handlers.js";
import { startParley } from "../main.js";
import { writeServicePid } from "./database-backup.js";

/** `parley serve`: runs the service until SIGTERM or SIGINT, then drains and exits. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const parley = await startParley(config);
  // Read by `parley admin restore`, which must not replace the database under a running service.
  writeServicePid(config.dataDir);
  const { logger } = parley;
  installProcessErrorHandlers(logger);
  const base = config.baseUrl;
  logger.info({ port: parley.http.port, dataDir: config.dataDir }, "parley started");
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

  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    logger.info({ signal, graceMs: config.shutdownGraceMs }, "shutting down");
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
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}
