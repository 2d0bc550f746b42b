import path from "node:path";
import type { Logger } from "pino";
import { createEngine, type Engine } from "../engine/index.js";
import { secretValues, type CarrierName, type Config } from "./config.js";
import { engineOptions } from "./engine-options.js";
import { createLogger } from "./core/logger.js";
import { tightenDirAndFiles } from "./core/private-files.js";
import { DATABASE_FILE_NAME, migrateToLatest, openDatabase, type Db } from "./db/database.js";
import { openPostgres } from "./db/postgres.js";
import { IDEMPOTENCY_TTL_MS, IdempotencyKeysRepository } from "./db/repositories/idempotency-keys.js";
import { createApp } from "./http/app.js";
import { listen, type RunningServer } from "./http/server.js";
import { createServices, type ServiceOptions, type Services } from "./services/container.js";
import { StorageHealth } from "./services/storage-health.js";
import type { DatabaseWriteObserver } from "./db/write-observer.js";
import { TestRunRunner } from "./telephony/test-run-runner.js";
import { CallDispatcher } from "./telephony/call-dispatcher.js";
import { MediaGateway } from "./telephony/media-gateway.js";
import { recordingsDir } from "./services/recording-files.js";
import { chooseCarriers } from "./telephony/carrier-setup.js";
import { setUpTwilio } from "./telephony/carriers/twilio/twilio-setup.js";
import { PendingDials } from "./telephony/pending-dials.js";
import type { Router } from "express";
import type { ApiCarrier } from "./telephony/carrier.js";
import { twilioWebhooks } from "./http/carriers/twilio-webhooks.js";
import { telnyxWebhooks } from "./http/carriers/telnyx-webhooks.js";
import { setUpTelnyx } from "./telephony/carriers/telnyx/telnyx-setup.js";
import { vonageWebhooks } from "./http/carriers/vonage-webhooks.js";
import { setUpVonage } from "./telephony/carriers/vonage/vonage-setup.js";
import { readSipAccess } from "./telephony/sip-access.js";
import { SipGateway } from "./telephony/sip-gateway.js";
import { COMMAND_POLL_MS } from "./services/call-commands.js";

export interface Parley {
  config: Config;
  services: Services;
  http: RunningServer;
  logger: Logger;
  /** The media engine, its WebSocket endpoints and (unless PARLEY_SIP_PORT=0) SIP; absent when PARLEY_ENGINE=0. */
  media: { engine: Engine; gateway: MediaGateway; sip: SipGateway | undefined; dispatcher: CallDispatcher; testRuns: TestRunRunner; carrierWebhooks: Router[] } | undefined;
  /**
   * Graceful stop: no new calls, live calls get up to `graceMs` (default 0) to end by
   * themselves before they are hung up, then open requests finish and the database is closed.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
}

export function databaseFile(config: Config): string {
  return path.join(config.dataDir, DATABASE_FILE_NAME);
}

/**
 * Opens the database (PostgreSQL at PARLEY_DATABASE_URL, or the SQLite file under the data
 * directory) and brings its schema up to date.
 */
export async function openMigratedDatabase(config: Config, logger?: Logger, observer?: DatabaseWriteObserver): Promise<Db> {
  const db = config.databaseUrl
    ? openPostgres(config.databaseUrl, { onError: (err) => logger?.error({ err }, "a PostgreSQL connection failed while idle; it is replaced at the next query") })
    : openDatabase(databaseFile(config), { observer });
  const { applied } = await migrateToLatest(db);
  if (applied.length > 0) logger?.info({ applied }, "database migrated");
  return db;
}

/** Composition root: config -> db -> services -> http. */
export async function startParley(config: Config, logger: Logger = createLogger(config.logLevel, { secrets: secretValues(config) }), options: Pick<ServiceOptions, "hostResolver" | "clock"> = {}): Promise<Parley> {
  // Checked first: a bad SIP setting must stop start-up before the engine's workers keep the process alive.
  const sipAccess = config.engine.enabled && config.sip.port > 0 ? readSipAccess(config.sip) : undefined;
  // Failed writes (a full disk) are counted from the first one: /readyz reports them.
  const storageHealth = new StorageHealth({ logger });
  const db = await openMigratedDatabase(config, logger, storageHealth.databaseObserver());
  // What has been started, undone in reverse when a later step fails: a failed start leaves
  // nothing running (no worker or timer keeping the process alive, no port held).
  const started: Array<() => Promise<unknown> | void> = [() => db.destroy()];
  try {
    const services = createServices(db, config, { logger, storageHealth, ...options });
    // Recordings an older version wrote readable by others (new ones are owner-only).
    tightenDirAndFiles(recordingsDir(config.dataDir));
    // This node beats from here; calls its previous process, or a lost node, left live are closed.
    const recovered = await services.nodes.start();
    started.push(() => services.nodes.stop({ graceful: false }));
    if (recovered > 0) logger.warn({ calls: recovered }, "closed calls left live by the previous process (failed, billed to their last heartbeat)");
    const unanalysed = await services.callResults.recoverPending();
    if (unanalysed > 0) logger.warn({ calls: unanalysed }, "finishing the analyses the previous process left under way");
    started.push(() => services.callResults.stop());
    let media: Parley["media"];
    if (config.engine.enabled) {
      const engine = await createEngine({
        ...engineOptions(config),
        onProviderRetry: services.metrics.providerRetry,
        onProviderRequest: services.metrics.providerRequest,
        onProviderSwitch: (change) => {
          services.metrics.providerSwitch(change);
          logger.warn(change, "provider chain: the next provider serves the request");
        },
      });
      started.push(() => engine.close());
      // Carriers reached through their APIs: their media comes back on a WebSocket, their webhooks under /carriers.
      const dials = new PendingDials();
      const api = new Map<CarrierName, ApiCarrier>();
      const carrierWebhooks: Router[] = [];
      const twilio = setUpTwilio(config, { services, dials, logger });
      if (twilio) {
        api.set("twilio", twilio);
        carrierWebhooks.push(twilioWebhooks(services, twilio, logger));
      }
      const telnyx = setUpTelnyx(config, { services, dials, logger });
      if (telnyx) {
        api.set("telnyx", telnyx.carrier);
        carrierWebhooks.push(telnyxWebhooks(services, telnyx.carrier, telnyx.publicKey, logger));
      }
      const vonage = setUpVonage(config, { services, dials, logger });
      if (vonage) {
        api.set("vonage", vonage);
        carrierWebhooks.push(vonageWebhooks(services, vonage, logger));
      }
      const gateway = new MediaGateway(services, engine, logger, { dials, control: (carrier, id) => api.get(carrier as CarrierName)?.control(id) });
      started.push(() => gateway.close());
      const sip = sipAccess ? await SipGateway.start(config.sip, sipAccess, services, gateway, logger) : undefined;
      if (sip) started.push(() => sip.close());
      const carriers = chooseCarriers(config, { services, sip, api });
      // Warm transfers call the person through the SIP trunk (docs/transfers.md); without one they are cold.
      const trunk = carriers.carrier("sip");
      if (trunk) gateway.warmTransfersThrough((call, signal) => trunk.dial({ ...call, metadata: {} }, signal));
      const dispatcher = new CallDispatcher(services, services.callLifecycle, carriers, gateway, logger);
      started.push(() => dispatcher.stop());
      // Agent test runs play their scenarios on this engine, each call in a slot of its own.
      const testRuns = new TestRunRunner(services, engine, (accountId) => gateway.admit(accountId), logger);
      services.testRuns.carryOutWith(testRuns);
      started.push(() => testRuns.close());
      services.calls.onQueued((accountId) => dispatcher.kick(accountId));
      media = { engine, gateway, sip, dispatcher, testRuns, carrierWebhooks };
      services.calls.attachLiveControl(media.gateway);
      // Ends asked of this node by others (POST /v1/calls/{id}/end on another node).
      services.callCommands.attach(media.gateway);
      services.callSupervision.attach(media.gateway);
      services.nodes.startCommands(COMMAND_POLL_MS);
      await dispatcher.kickAll();
      // Campaigns are dialled only where calls can be placed: without the engine they stay scheduled.
      services.campaignRunner.start();
      started.push(() => services.campaignRunner.stop());
    }
    // Deliveries left pending or mid-retry by the previous process resume on their schedule.
    services.webhookDelivery.start();
    started.push(() => services.webhookDelivery.stop());
    // Reminders fall due whether or not calls can be placed; due ones missed while stopped go now.
    services.reminders.start();
    started.push(() => services.reminders.stop());
    // Content past its account's retention goes now, then daily.
    services.retention.start();
    started.push(() => services.retention.stop());
    const live = media;
    const app = createApp({
      services,
      logger,
      callSlots: live && (() => ({ capacity: live.engine.capacity, inUse: live.gateway.slotsHeld })),
      carrierWebhooks: live?.carrierWebhooks ?? [],
    });
    const http = await listen(app, config.port, config.host);
    media?.gateway.attach(http.server);
    return running({ config, services, http, logger, media, db });
  } catch (err) {
    for (const undo of started.reverse()) await Promise.resolve().then(undo).catch((undoErr: unknown) => logger.warn({ err: undoErr }, "clean-up after a failed start failed"));
    throw err;
  }
}

/** A started service, with its graceful stop. */
function running({ config, services, http, logger, media, db }: Omit<Parley, "stop"> & { db: Db }): Parley {
  const sweeper = sweepIdempotencyKeys(db, logger);
  let stopping: Promise<void> | undefined;
  return {
    config,
    services,
    http,
    logger,
    media,
    stop: (options = {}) =>
      (stopping ??= (async () => {
        clearInterval(sweeper);
        // No new calls; live ones may finish, then the rest are hung up, stored and billed while
        // the database is open. SIP closes last: live SIP calls need its socket for their BYE.
        await services.campaignRunner.stop();
        await services.reminders.stop();
        await services.retention.stop();
        media?.dispatcher.stop();
        media?.sip?.stopAccepting();
        // Test runs under way end as error (their scenarios' calls are simulated: nothing to drain).
        await media?.testRuns.close();
        await media?.gateway.drain(options.graceMs ?? 0);
        await media?.gateway.close();
        await media?.sip?.close();
        await http.close();
        // Its calls are stored: other nodes need not wait for its heartbeat to fade.
        await services.nodes.stop({ graceful: true });
        // Analyses still under way stay pending: the next start finishes them.
        await services.callResults.stop();
        await services.webhookDelivery.stop();
        await services.toolRequests.sender.close();
        await services.recordings.close?.();
        await media?.engine.close();
        await db.destroy();
      })()),
  };
}

/** Deletes stored idempotent responses past their 24 hours, now and every hour. */
function sweepIdempotencyKeys(db: Db, logger: Logger): NodeJS.Timeout {
  const keys = new IdempotencyKeysRepository(db);
  const sweep = () =>
    keys.deleteOlderThan(new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString()).catch((err: unknown) => logger.error({ err }, "idempotency sweep failed"));
  void sweep();
  const timer = setInterval(sweep, 60 * 60 * 1000);
  timer.unref();
  return timer;
}
