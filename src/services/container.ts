import type { Logger } from "pino";
import { pino } from "pino";
import type { Config } from "../config.js";
import { CallAnalyzer, engineVoices } from "../../engine/index.js";
import { analysisModel, engineOptions } from "../engine-options.js";
import type { Db } from "../db/database.js";
import { AccountsService } from "./accounts.js";
import { AgentsService } from "./agents.js";
import { ApiKeysService } from "./api-keys.js";
import { AppointmentsService } from "./appointments.js";
import { AppointmentReminders } from "./appointment-reminders.js";
import { CallEvents } from "./call-events.js";
import { CallLifecycle } from "./call-lifecycle.js";
import { CallResults } from "./call-results.js";
import { CallsService } from "./calls.js";
import { CampaignCallOutcomes } from "./campaign-call-outcomes.js";
import { CampaignEvents } from "./campaign-events.js";
import { CampaignRunner } from "./campaign-runner.js";
import { DoNotCallService } from "./do-not-call.js";
import { CampaignsService } from "./campaigns.js";
import { CreditReservations } from "./credit-reservations.js";
import { CursorCodec, loadServiceSecret } from "./cursor-codec.js";
import { DestinationPolicy } from "./destination-policy.js";
import { EventLog } from "./event-log.js";
import { LiveCallsService } from "./live-calls.js";
import { Outbox } from "./outbox.js";
import { PhoneNumbersService } from "./phone-numbers.js";
import { SecretsService } from "./secrets.js";
import { KnowledgeBasesService } from "./knowledge-bases.js";
import { TestRunsService } from "./test-runs.js";
import { TestAudioService } from "./test-audio.js";
import { CallSupervision } from "./call-supervision.js";
import { RecordingLinks } from "./recording-links.js";
import { LocalRecordingStore } from "./local-recording-store.js";
import type { RecordingStore } from "./recording-store.js";
import { S3RecordingStore } from "./s3-recording-store.js";
import { SocketProbe } from "./url-reachability.js";
import { StorageHealth } from "./storage-health.js";
import { VoiceCatalog } from "./voices.js";
import { CallContentRemoval } from "./call-content-removal.js";
import { RetentionJob } from "./retention-job.js";
import { CarrierStreamTokens } from "./carrier-stream-tokens.js";
import { WebCallTokens } from "./web-call-tokens.js";
import { WebhookDeliveriesService } from "./webhook-deliveries.js";
import { WebhookDeliveryWorker } from "./webhook-delivery.js";
import { AGENT_LIMITS } from "./agent-defaults.js";
import { WebhookSender } from "./webhook-sender.js";
import { webhookNetworkPolicy, type HostResolver } from "./webhook-network-policy.js";
import { WebhookTargets } from "./webhook-targets.js";
import { WebhooksService } from "./webhooks.js";
import { ParleyMetrics } from "../observability/metrics.js";
import { CampaignContactsRepository } from "../db/repositories/campaign-contacts.js";
import { CallCommands } from "./call-commands.js";
import { NodePresence, nodeIdOf } from "./node-presence.js";

/** How much of a receiver's answer the delivery log keeps. */
const RESPONSE_BODY_LIMIT = 1024;
/** Most bytes of a custom tool's answer read: the model gets it whole, or the tool failed (too large). */
const TOOL_ANSWER_LIMIT = 16 * 1024;

/** Every use-case service, wired once by the composition root (and by tests). */
export interface Services {
  config: Config;
  db: Db;
  cursors: CursorCodec;
  recordingLinks: RecordingLinks;
  /** Where ended calls' recordings are kept: the data directory, or PARLEY_RECORDINGS_S3_BUCKET. */
  recordings: RecordingStore;
  voices: VoiceCatalog;
  accounts: AccountsService;
  apiKeys: ApiKeysService;
  agents: AgentsService;
  webhooks: WebhooksService;
  /** The account's secrets: written and listed through the API, values read only by its tools. */
  secrets: SecretsService;
  /** The account's knowledge bases: documents cut into passages, searched for agents' answers. */
  knowledgeBases: KnowledgeBasesService;
  /** Live supervision: say, whisper and hand-back on live calls, and listen tokens. */
  callSupervision: CallSupervision;
  /** Agent test runs: scenarios a simulated caller plays (carried out once the engine is up). */
  testRuns: TestRunsService;
  /** Recordings test runs' callers play. */
  testAudio: TestAudioService;
  /** Writes ended calls' analyses: the model's when one is configured, else the deterministic one. */
  analyzer: CallAnalyzer;
  /** Sends the outbox's deliveries (started by the composition root). */
  webhookDelivery: WebhookDeliveryWorker;
  webhookDeliveries: WebhookDeliveriesService;
  /** How agents' custom HTTP tools reach their URLs: the webhook network policy, answers up to 16 KiB. */
  toolRequests: { sender: WebhookSender; checkTarget(url: string): URL };
  eventLog: EventLog;
  campaigns: CampaignsService;
  /** Dials running campaigns (started by the composition root). */
  campaignRunner: CampaignRunner;
  doNotCall: DoNotCallService;
  /** Every call status change goes through it (and its followers), in the change's transaction. */
  callEvents: CallEvents;
  /** Ended calls' analyses (those a model writes finish in the background). */
  callResults: CallResults;
  appointments: AppointmentsService;
  /** Sends appointment reminders at their time (started by the composition root). */
  reminders: AppointmentReminders;
  phoneNumbers: PhoneNumbersService;
  calls: CallsService;
  liveCalls: LiveCallsService;
  /** This node among those sharing the database: its heartbeat, and the calls of lost nodes closed (started by the composition root). */
  nodes: NodePresence;
  /** Live controls sent to the node that runs a call. */
  callCommands: CallCommands;
  /** Removes an ended call's recording, transcript and analysis (privacy requests). */
  callContent: CallContentRemoval;
  /** Single-use tokens browsers connect their calls with. */
  webCallTokens: WebCallTokens;
  /** Single-use tokens of the media streams carriers open back to Parley. */
  carrierStreams: CarrierStreamTokens;
  callLifecycle: CallLifecycle;
  destinations: DestinationPolicy;
  /** Where every event is written, with its deliveries, in the transaction of its change. */
  outbox: Outbox;
  /** Credit held by the calls this process dials and runs (in memory). */
  reservations: CreditReservations;
  /** The Prometheus metrics served at GET /metrics (one registry per container). */
  metrics: ParleyMetrics;
  /** Removes ended calls' content past their account's retention, daily (started by the composition root). */
  retention: RetentionJob;
  /** Writes that failed for want of disk (recordings, the database), counted; /readyz reads it. */
  storageHealth: StorageHealth;
}

/** What the composition root may replace (tests: a resolver that keeps every name on loopback). */
export interface ServiceOptions {
  logger?: Logger;
  /** Resolves webhook receivers' host names; the system's resolver by default. */
  hostResolver?: HostResolver;
  /** The schedulers' clock (ms since the epoch: the campaign runner's calling hours, reminders' due times): tests move it. */
  clock?: () => number;
  /** The storage health the database connection reports to (the composition root makes it before opening the database). */
  storageHealth?: StorageHealth;
}

export function createServices(db: Db, config: Config, options: ServiceOptions = {}): Services {
  const logger = options.logger ?? pino({ level: "silent" });
  const metrics = new ParleyMetrics();
  const storageHealth = options.storageHealth ?? new StorageHealth({ logger });
  metrics.watchStorage(() => storageHealth.counts());
  const contacts = new CampaignContactsRepository(db);
  metrics.watchCampaignContacts(() => contacts.countByStatus(["scheduled", "running", "paused"]));
  const dataSecret = loadServiceSecret(config);
  const cursors = new CursorCodec(dataSecret);
  const doNotCall = new DoNotCallService(db, { cursors });
  const secrets = new SecretsService(db, { cursors });
  const recordings: RecordingStore = config.recordings.s3.bucket ? new S3RecordingStore(config.recordings.s3, { logger }) : new LocalRecordingStore();
  const recordingLinks = new RecordingLinks(db, dataSecret, config.baseUrl, Date.now, recordings);
  const engine = engineOptions(config);
  const voices = new VoiceCatalog(engineVoices(engine));
  const outbox = new Outbox(db);
  const accounts = new AccountsService(db, config, cursors, { outbox });
  const apiKeys = new ApiKeysService(db);
  const destinations = new DestinationPolicy(db, config);
  const clock = options.clock ?? Date.now;
  let calls: CallsService | undefined;
  const reminders = new AppointmentReminders(db, { now: clock }, { outbox, accounts, destinations, doNotCall, queued: (accountId) => calls?.announceQueued(accountId), logger });
  const networkPolicy = webhookNetworkPolicy(config.webhooks, options.hostResolver);
  const targets = new WebhookTargets(config.webhooks, networkPolicy, new SocketProbe({ policy: networkPolicy, timeoutMs: config.webhooks.timeoutMs }));
  const knowledgeBases = new KnowledgeBasesService(db, { cursors });
  const agents = new AgentsService(db, { accounts, voices, cursors, destinations, outbox, reminders, targets, secrets, knowledgeBases });
  const webhooks = new WebhooksService(db, { accounts, cursors, targets });
  const webhookDelivery = new WebhookDeliveryWorker(db, {
    outbox,
    sender: new WebhookSender({ timeoutMs: config.webhooks.timeoutMs, responseBodyLimit: RESPONSE_BODY_LIMIT, lookup: targets.lookup }),
    checkTarget: async (url) => targets.checkForAttempt(url),
    settings: config.webhooks,
    logger,
    metrics,
  });
  const webhookDeliveries = new WebhookDeliveriesService(db, { webhooks, outbox, worker: webhookDelivery, cursors });
  const eventLog = new EventLog(db, { cursors });
  const campaignEvents = new CampaignEvents(outbox);
  const campaigns = new CampaignsService(db, { accounts, cursors, events: campaignEvents });
  const appointments = new AppointmentsService(db, { cursors, outbox, now: clock, bookingsPerCall: config.appointments.bookingsPerCall });
  appointments.onChanged(() => reminders.wake());
  const phoneNumbers = new PhoneNumbersService(db, { agents, cursors, outbox });
  const events = new CallEvents(outbox, recordingLinks, logger);
  const nodeId = nodeIdOf(config);
  const reservations = new CreditReservations(db, config.credits.perMinute, nodeId);
  const callLifecycle = new CallLifecycle(db, { accounts, events, reservations, destinations, doNotCall, now: clock, nodeId });
  // Analyses go to the model the agents talk through, when there is one.
  const model = analysisModel(config);
  const analyzer = new CallAnalyzer({ ...(model ? { model } : {}), timeoutMs: config.analysis.timeoutMs });
  const callResults = new CallResults(db, { analyzer, events, doNotCall, logger });
  const liveCalls = new LiveCallsService(db, config, { accounts, events, lifecycle: callLifecycle, reservations, results: callResults, recordings, nodeId });
  const callCommands = new CallCommands(db);
  calls = new CallsService(db, config, { accounts, cursors, events, destinations, liveCalls, reservations, targets, doNotCall, commands: callCommands, nodeId });
  const testAudio = new TestAudioService(db, { cursors });
  const testRuns = new TestRunsService(db, { agents, cursors, outbox, nodeId, testAudio });
  const nodes = new NodePresence(db, config, { id: nodeId, liveCalls, reservations, commands: callCommands, testRuns, logger });
  const campaignRunner = new CampaignRunner(
    db,
    { pollMs: config.campaigns.pollMs, now: clock, perMinute: config.credits.perMinute },
    { accounts, reservations, doNotCall, events: campaignEvents, queued: (accountId) => calls.announceQueued(accountId), logger, metrics },
  );
  const outcomes = new CampaignCallOutcomes({ events: campaignEvents, now: clock, minuteMs: config.campaigns.minuteMs, onMoved: () => campaignRunner.wake() });
  events.follow(outcomes.follow);
  campaigns.onChanged(() => campaignRunner.wake());
  const callContent = new CallContentRemoval(db, { events, recordings, logger });
  const retention = new RetentionJob(db, { intervalMs: config.retention.intervalMs, now: clock }, { accounts, callContent, logger });
  return {
    config,
    db,
    cursors,
    recordingLinks,
    recordings,
    voices,
    accounts,
    apiKeys,
    agents,
    phoneNumbers,
    calls,
    liveCalls,
    nodes,
    callCommands,
    webCallTokens: new WebCallTokens(db, { agents, liveCalls }),
    carrierStreams: new CarrierStreamTokens(db),
    callContent,
    retention,
    callLifecycle,
    destinations,
    outbox,
    reservations,
    storageHealth,
    webhooks,
    secrets,
    knowledgeBases,
    testRuns,
    testAudio,
    analyzer,
    callSupervision: new CallSupervision(db, config, { calls, commands: callCommands, nodeId }),
    webhookDelivery,
    webhookDeliveries,
    toolRequests: {
      sender: new WebhookSender({ timeoutMs: AGENT_LIMITS.toolTimeoutMs.max, responseBodyLimit: TOOL_ANSWER_LIMIT, lookup: targets.lookup }),
      checkTarget: (url: string) => targets.checkForAttempt(url),
    },
    eventLog,
    campaigns,
    campaignRunner,
    doNotCall,
    callEvents: events,
    callResults,
    appointments,
    reminders,
    metrics,
  };
}
