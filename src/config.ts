import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseIpNetworkList } from "./core/ip-networks.js";
import { DEFAULT_ANALYSIS_TIMEOUT_MS, DEFAULT_MAX_CALLS, DEFAULT_MAX_SERVER_TRANSACTIONS, DEFAULT_RTP_TIMEOUT_MS, VAD_NAMES } from "../engine/index.js";
import { LOG_LEVELS } from "./core/logger.js";
import type { ProviderChoice } from "../engine/index.js";
import { CHAIN_FILE_KEYS, chainSecrets, CONFIG_STAGES, ProviderConfigError, providerSettingRows, stageChain, type ConfigStage, type RawStage } from "./provider-settings.js";
import { CARRIERS, type CarrierName } from "./core/carrier-names.js";

/**
 * One typed, validated configuration for the server and the CLI.
 * Sources, later wins: built-in defaults, `parley.config.json` (or the file named by
 * PARLEY_CONFIG), then PARLEY_* environment variables. Any bad value stops start-up with a
 * ConfigError that names the key.
 */

export const PLANS = ["pro", "agency"] as const;
export type Plan = (typeof PLANS)[number];

export interface PlanLimits {
  requestsPerMinute: number;
  agents: number;
  webhooks: number;
  concurrentCalls: number;
  queuedCalls: number;
}

export { CARRIERS, type CarrierName };

/** The longest retention an account or the service may set: a hundred years. */
export const RETENTION_MAX_DAYS = 36_500;

/** Whether `url` names a PostgreSQL database (`postgres://` or `postgresql://`, no spaces). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\/[^\s]+$/.test(url);
}


export class ConfigError extends Error {
  constructor(readonly key: string, message: string) {
    super(`configuration ${key}: ${message}`);
    this.name = "ConfigError";
  }
}

/** `provider`: a provider's field, checked by the chosen provider's schema (provider-settings.ts). */
export type SettingKind = "port" | "int" | "string" | "url" | "bool" | "path" | "enum" | "durations" | "provider";

/** What a row's `default` may be. */
export type SettingDefault = number | boolean | string | readonly number[] | null;

/** One row of the settings table: how a value is found (file key, variable) and checked, and what it is unset. */
export interface Setting {
  /** Dotted path in the config object and in parley.config.json. */
  key: string;
  env: string;
  kind: SettingKind;
  /** Least value of an int; least length of a string. */
  min?: number;
  max?: number;
  /** Allowed values of an `enum` setting. */
  values?: readonly string[];
  /** A credential: a bad value is reported without quoting it. */
  secret?: boolean;
  /** A key of exactly this many bytes, written as hex (twice as many characters). */
  hexBytes?: number;
  /** The value unset; provider rows have none here (the chosen provider's schema has it). */
  default?: SettingDefault;
  /** The default may be null (unset), besides a value of the row's kind. */
  nullable?: boolean;
  /** What the setting means, for the reader of this file (and of the documentation). */
  doc?: string;
}

/** A row's default, of the type its kind holds (null too when `nullable`). */
type Defaulted<K extends SettingKind, V> = { kind: K; nullable?: false; default: V } | { kind: K; nullable: true; default: V | null };

/** A row of this file's own table: written once, with its default and meaning; Config's type is derived from these. */
export type SettingRow = Setting & { doc: string } & (
    | Defaulted<"port" | "int", number>
    | Defaulted<"bool", boolean>
    | Defaulted<"string" | "url" | "path", string>
    | Defaulted<"enum", string>
    | Defaulted<"durations", readonly number[]>
  );

/** The type of a row's value, from its kind: an enum's is the union of its values; a nullable row's may be null. */
export type SettingValue<R> =
  | (R extends { kind: "port" | "int" }
      ? number
      : R extends { kind: "bool" }
        ? boolean
        : R extends { kind: "durations" }
          ? number[]
          : R extends { kind: "enum"; values: readonly (infer V)[] }
            ? V
            : string)
  | (R extends { nullable: true } ? null : never);

/** Each row as its dotted key and value type. */
type Entry<R> = R extends { key: infer K extends string } ? { key: K; value: SettingValue<R> } : never;
type Head<K extends string> = K extends `${infer H}.${string}` ? H : K;
/** The entries under `H`, their keys without `H.`. */
type Below<E, H extends string> = E extends { key: `${H}.${infer T}`; value: infer V } ? { key: T; value: V } : never;

/** Dotted keys unflattened: `{ key: "a.b"; value: V }` becomes `{ a: { b: V } }`. */
export type Unflatten<E extends { key: string; value: unknown }> = {
  [H in Head<E["key"]>]: [Extract<E, { key: H }>] extends [never] ? Unflatten<Below<E, H>> : Extract<E, { key: H }>["value"];
};

/**
 * This file's settings, each written once: key, variable, checks, default and meaning. The
 * provider rows (providerSettingRows) go in after the engine's and the plan rows after all
 * (see SETTINGS); neither is part of the derived type.
 */
const ROWS = [
  { key: "port", env: "PARLEY_PORT", kind: "port", default: 8080, doc: "HTTP port; 0: any free port." },
  { key: "host", env: "PARLEY_HOST", kind: "string", default: "0.0.0.0", doc: "Listen address of the HTTP server." },
  { key: "dataDir", env: "PARLEY_DATA_DIR", kind: "path", default: "./data", doc: "The SQLite file, the cursor secret and the recordings; resolved against the working directory." },
  {
    key: "databaseUrl",
    env: "PARLEY_DATABASE_URL",
    kind: "string",
    secret: true,
    default: "",
    doc: "`postgres://user:password@host:port/database` to keep the data in PostgreSQL (several nodes share one); empty: SQLite in the data directory.",
  },
  { key: "baseUrl", env: "PARLEY_BASE_URL", kind: "url", default: "", doc: "Public address of the service, used in absolute URLs it hands out; empty: http://<host>:<port>." },
  {
    key: "secret",
    env: "PARLEY_SECRET",
    kind: "string",
    secret: true,
    hexBytes: 32,
    default: "",
    doc: "The key list cursors and recording links are signed with, as 64 hex characters; every node behind one load balancer needs the same. Empty: the data directory's `cursor-secret` file.",
  },
  { key: "node.id", env: "PARLEY_NODE_ID", kind: "string", default: "", doc: "This node's id among those sharing the database; empty: one kept in the data directory (`node-id`)." },
  { key: "node.graceMs", env: "PARLEY_NODE_GRACE_MS", kind: "int", min: 2_000, max: 3_600_000, default: 60_000, doc: "A node that has not beaten for this long is lost: another closes its live calls." },
  { key: "logLevel", env: "PARLEY_LOG_LEVEL", kind: "enum", values: LOG_LEVELS, default: "info", doc: "Least level logged (JSON lines on stdout); `silent`: nothing." },
  { key: "bodyLimitBytes", env: "PARLEY_BODY_LIMIT_BYTES", kind: "int", min: 1024, max: 50 * 1024 * 1024, default: 1024 * 1024, doc: "Largest JSON body accepted." },
  { key: "shutdownGraceMs", env: "PARLEY_SHUTDOWN_GRACE_MS", kind: "int", min: 0, max: 3_600_000, default: 30_000, doc: "How long SIGTERM lets live calls finish by themselves before hanging up the rest." },
  { key: "webhooks.allowLoopbackHttp", env: "PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP", kind: "bool", default: false, doc: "Also allow http:// URLs on loopback addresses (local development and tests)." },
  { key: "webhooks.verifyReachable", env: "PARLEY_WEBHOOK_VERIFY_URL", kind: "bool", default: true, doc: "Check that a webhook URL accepts connections before storing it (`url_unreachable`)." },
  {
    key: "webhooks.allowNetworks",
    env: "PARLEY_WEBHOOK_ALLOW_NETWORKS",
    kind: "string",
    default: "",
    doc: "Networks webhooks may reach although they are not public (CIDRs, comma-separated); loopback is `allowLoopbackHttp`'s.",
  },
  { key: "webhooks.timeoutMs", env: "PARLEY_WEBHOOK_TIMEOUT_MS", kind: "int", min: 100, max: 60_000, default: 5_000, doc: "One delivery attempt (connection, answer, body) within this." },
  {
    key: "webhooks.retryScheduleMs",
    env: "PARLEY_WEBHOOK_RETRY_SCHEDULE",
    kind: "durations",
    max: 20,
    // The reference's five retries: 1 s, 5 s, 30 s, 2 min, 10 min.
    default: [1_000, 5_000, 30_000, 120_000, 600_000],
    doc: "Waits before each retry of a failed delivery, in ms; after the last, it is `failed`.",
  },
  {
    key: "campaigns.pollMs",
    env: "PARLEY_CAMPAIGN_POLL_MS",
    kind: "int",
    min: 10,
    max: 60_000,
    default: 1_000,
    doc: "How often the runner looks for due work when nothing woke it (retries falling due, calling hours opening).",
  },
  {
    key: "appointments.bookingsPerCall",
    env: "PARLEY_BOOKINGS_PER_CALL",
    kind: "int",
    min: 0,
    max: 50,
    default: 2,
    doc: "Most appointments one call may book (a caller, or a model, cannot fill the calendar); 0: calls book none.",
  },
  {
    key: "analysis.timeoutMs",
    env: "PARLEY_ANALYSIS_TIMEOUT_MS",
    kind: "int",
    min: 100,
    max: 120_000,
    default: DEFAULT_ANALYSIS_TIMEOUT_MS,
    doc: "How long a model may take to write a call's analysis (retries included) before the deterministic one stands in.",
  },
  {
    key: "campaigns.minuteMs",
    env: "PARLEY_CAMPAIGN_MINUTE_MS",
    kind: "int",
    min: 1,
    max: 60_000,
    default: 60_000,
    doc: "The length of a minute in `retry_delay_minutes` (tests and demos shorten it; 60000 in service).",
  },
  { key: "webhooks.concurrency", env: "PARLEY_WEBHOOK_CONCURRENCY", kind: "int", min: 1, max: 1000, default: 32, doc: "Delivery attempts in flight at once, in all." },
  {
    key: "webhooks.hostConcurrency",
    env: "PARLEY_WEBHOOK_HOST_CONCURRENCY",
    kind: "int",
    min: 1,
    max: 1000,
    default: 8,
    doc: "Delivery attempts in flight at once to one receiver host (one slow receiver holds no more).",
  },
  { key: "engine.enabled", env: "PARLEY_ENGINE", kind: "bool", default: true, doc: "Load the media engine (VAD, recognizers, TTS) and serve the media endpoints." },
  { key: "engine.vad", env: "PARLEY_VAD", kind: "enum", values: VAD_NAMES, default: "silero", doc: "Voice activity detector: `silero` (Silero v5, ONNX) or `webrtc` (lighter, weaker in noise)." },
  {
    key: "engine.callCapacity",
    env: "PARLEY_CALL_CAPACITY",
    kind: "int",
    min: 0,
    max: 100_000,
    default: 0,
    doc: "Calls the box carries at once (admission control: past it a call is refused before it starts); 0: from the cores and the recognizer in use.",
  },
  { key: "engine.sessionWorkers", env: "PARLEY_SESSION_WORKERS", kind: "int", min: 0, max: 64, default: 0, doc: "Threads that run calls, each with its own providers; 0: one per core." },
  {
    key: "engine.asrRecognizers",
    env: "PARLEY_ASR_RECOGNIZERS",
    kind: "int",
    min: 0,
    max: 64,
    default: 0,
    doc: "Embedded speech recognizer processes, ~125 MB each, leased while a caller speaks; 0: from the cores and memory.",
  },
  { key: "engine.ttsWorkers", env: "PARLEY_TTS_WORKERS", kind: "int", min: 0, max: 64, default: 0, doc: "Flite worker threads, shared out among the session workers; 0: one per core, at least 2." },
  { key: "engine.silenceTimeoutMs", env: "PARLEY_SILENCE_TIMEOUT_MS", kind: "int", min: 0, max: 3_600_000, default: 30_000, doc: "Silence on both sides this long ends a call (after a goodbye); 0: never." },
  {
    key: "engine.heartbeatMs",
    env: "PARLEY_CALL_HEARTBEAT_MS",
    kind: "int",
    min: 1_000,
    max: 300_000,
    default: 15_000,
    doc: "How often live calls are marked alive in the database (with their transcript so far): a call the process dies during is billed up to its last mark, so up to this much is unbilled.",
  },
  {
    key: "engine.accountSharePercent",
    env: "PARLEY_ENGINE_ACCOUNT_SHARE_PERCENT",
    kind: "int",
    min: 1,
    max: 100,
    default: 50,
    doc: "Most of the engine's call capacity one account may hold, in percent, while the installation has more than one account: one tenant cannot take every call slot.",
  },
  // The provider rows go in here (see SETTINGS).
  { key: "sip.port", env: "PARLEY_SIP_PORT", kind: "port", default: 5060, doc: "UDP port of the SIP user agent; 0 turns SIP off." },
  { key: "sip.host", env: "PARLEY_SIP_HOST", kind: "string", default: "0.0.0.0", doc: "Listen address for SIP and RTP." },
  { key: "sip.publicIp", env: "PARLEY_SIP_PUBLIC_IP", kind: "string", default: "", doc: "Address written into Contact and SDP; empty: the listen address (127.0.0.1 for 0.0.0.0)." },
  { key: "sip.rtpPorts", env: "PARLEY_RTP_PORTS", kind: "string", default: "10000-20000", doc: 'RTP port range, "min-max".' },
  { key: "sip.allow", env: "PARLEY_SIP_ALLOW", kind: "string", default: "", doc: 'Sources allowed to send INVITEs: addresses or IPv4 CIDRs, comma-separated, or "*"; empty: none.' },
  { key: "sip.trunk", env: "PARLEY_SIP_TRUNK", kind: "string", default: "", doc: 'Where outbound INVITEs go with the `sip` carrier: "host:port".' },
  { key: "sip.trunkUser", env: "PARLEY_SIP_TRUNK_USER", kind: "string", default: "", doc: "Digest username for the trunk's 401/407 challenges; empty: send no credentials." },
  { key: "sip.trunkPassword", env: "PARLEY_SIP_TRUNK_PASSWORD", kind: "string", secret: true, default: "", doc: "Digest password for the trunk (never echoed in errors)." },
  { key: "sip.trunkRealm", env: "PARLEY_SIP_TRUNK_REALM", kind: "string", default: "", doc: "The trunk's digest realm: challenges naming another are not answered; empty: any realm." },
  { key: "sip.ringTimeoutMs", env: "PARLEY_SIP_RING_TIMEOUT_MS", kind: "int", min: 1000, max: 300_000, default: 30_000, doc: "How long an outbound call rings before it is cancelled as `no_answer`." },
  { key: "sip.rtpTimeoutMs", env: "PARLEY_RTP_TIMEOUT_MS", kind: "int", min: 0, max: 3_600_000, default: DEFAULT_RTP_TIMEOUT_MS, doc: "A SIP call whose far end sends no RTP this long is hung up; 0: never." },
  { key: "sip.maxCalls", env: "PARLEY_SIP_MAX_CALLS", kind: "int", min: 1, max: 100_000, default: DEFAULT_MAX_CALLS, doc: "SIP calls at most (up, and inbound ones being decided); past it an INVITE gets 503." },
  { key: "sip.maxTransactions", env: "PARLEY_SIP_MAX_TRANSACTIONS", kind: "int", min: 10, max: 1_000_000, default: DEFAULT_MAX_SERVER_TRANSACTIONS, doc: "Live SIP server transactions at most; past it a request gets 503." },
  // Limits on the media WebSocket endpoints, per client address (an IPv6 client by its /64).
  {
    key: "media.upgradesPerMinute",
    env: "PARLEY_MEDIA_UPGRADES_PER_MINUTE",
    kind: "int",
    min: 1,
    max: 1_000_000,
    default: 120,
    doc: "WebSocket upgrades (`/media/ws`, `/media/twilio`) one address may ask for per minute, counted before any authentication.",
  },
  { key: "media.pendingStreams", env: "PARLEY_MEDIA_PENDING_STREAMS", kind: "int", min: 1, max: 1_000_000, default: 100, doc: "`/media/twilio` sockets open but not yet authenticated (no valid `start` yet), in all." },
  { key: "media.pendingStreamsPerAddress", env: "PARLEY_MEDIA_PENDING_STREAMS_PER_ADDRESS", kind: "int", min: 1, max: 1_000_000, default: 20, doc: "The same, per address." },
  {
    key: "media.readTimeoutMs",
    env: "PARLEY_MEDIA_READ_TIMEOUT_MS",
    kind: "int",
    min: 0,
    max: 600_000,
    default: 10_000,
    doc: "A media socket that leaves a ping unanswered this long (it stopped reading what it is sent) is cut off and its call ended (`client_not_reading`); 0: never.",
  },
  { key: "carrier", env: "PARLEY_CARRIER", kind: "enum", values: CARRIERS, default: "simulator", doc: "Who places outbound calls: the built-in simulator, or the SIP trunk (or a carrier's API)." },
  // Twilio's REST API and the secret its webhooks are signed with (carriers/twilio).
  { key: "twilio.accountSid", env: "PARLEY_TWILIO_ACCOUNT_SID", kind: "string", default: "", doc: "The Twilio account whose REST API places and ends calls." },
  { key: "twilio.authToken", env: "PARLEY_TWILIO_AUTH_TOKEN", kind: "string", secret: true, default: "", doc: "That account's auth token: the REST API's password and the key its webhooks are signed with." },
  { key: "twilio.apiUrl", env: "PARLEY_TWILIO_API_URL", kind: "url", default: "https://api.twilio.com", doc: "Twilio's REST API (tests point it at a local stand-in)." },
  // Telnyx's Call Control API, the Call Control application calls go through, and the key its webhooks are signed with (carriers/telnyx).
  { key: "telnyx.apiKey", env: "PARLEY_TELNYX_API_KEY", kind: "string", secret: true, default: "", doc: "The Telnyx API key that places, answers and ends calls through Call Control." },
  { key: "telnyx.publicKey", env: "PARLEY_TELNYX_PUBLIC_KEY", kind: "string", default: "", doc: "The public key Telnyx's webhook signatures (ed25519) are checked with." },
  { key: "telnyx.connectionId", env: "PARLEY_TELNYX_CONNECTION_ID", kind: "string", default: "", doc: "The Call Control application outbound calls are placed through (Telnyx's `connection_id`)." },
  { key: "telnyx.apiUrl", env: "PARLEY_TELNYX_API_URL", kind: "url", default: "https://api.telnyx.com", doc: "Telnyx's REST API (tests point it at a local stand-in)." },
  // Vonage's Voice API: the application, its private key file, and the secret its webhooks are signed with (carriers/vonage).
  { key: "vonage.applicationId", env: "PARLEY_VONAGE_APPLICATION_ID", kind: "string", default: "", doc: "The Vonage application whose Voice API places and ends calls." },
  { key: "vonage.privateKeyFile", env: "PARLEY_VONAGE_PRIVATE_KEY_FILE", kind: "string", default: "", doc: "That application's private key file (PEM), which signs the requests to the Voice API." },
  { key: "vonage.signatureSecret", env: "PARLEY_VONAGE_SIGNATURE_SECRET", kind: "string", secret: true, default: "", doc: "The account's signature secret Vonage's signed webhooks are checked with." },
  { key: "vonage.apiUrl", env: "PARLEY_VONAGE_API_URL", kind: "url", default: "https://api.nexmo.com", doc: "Vonage's Voice API (tests point it at a local stand-in)." },
  {
    key: "callPrefixes",
    env: "PARLEY_CALL_PREFIXES",
    kind: "string",
    default: "",
    doc: 'Where outbound calls may go (toll-fraud guard): "+1,+44" prefixes, "*" for anywhere; empty: the calling codes of the account\'s own numbers.',
  },
  { key: "metrics.token", env: "PARLEY_METRICS_TOKEN", kind: "string", secret: true, min: 16, default: "", doc: "Bearer token `GET /metrics` requires; empty: no token, only loopback clients are served." },
  {
    key: "retention.days",
    env: "PARLEY_RETENTION_DAYS",
    kind: "int",
    min: 1,
    max: RETENTION_MAX_DAYS,
    nullable: true,
    default: null,
    doc: "Days an ended call keeps its recording, transcript and analysis, for accounts without their own setting; null: for ever (kept until deleted, DELETE /v1/calls/{id}).",
  },
  { key: "retention.intervalMs", env: "PARLEY_RETENTION_INTERVAL_MS", kind: "int", min: 1_000, max: 7 * 86_400_000, default: 86_400_000, doc: "How often the retention pass runs (it also runs at start-up)." },
  // An S3-compatible bucket for ended calls' recordings (see S3RecordingStore).
  { key: "recordings.s3.bucket", env: "PARLEY_RECORDINGS_S3_BUCKET", kind: "string", default: "", doc: "The bucket each ended call's recording is uploaded to; empty: the data directory." },
  { key: "recordings.s3.endpoint", env: "PARLEY_RECORDINGS_S3_ENDPOINT", kind: "url", default: "", doc: "The service's address (MinIO, Ceph, R2...), addressed path-style; empty: AWS." },
  { key: "recordings.s3.region", env: "PARLEY_RECORDINGS_S3_REGION", kind: "string", default: "us-east-1", doc: "The region requests are signed for (R2: `auto`)." },
  { key: "recordings.s3.accessKeyId", env: "PARLEY_RECORDINGS_S3_ACCESS_KEY_ID", kind: "string", default: "", doc: "Empty: the SDK's default credentials (AWS_* variables, instance role...)." },
  { key: "recordings.s3.secretAccessKey", env: "PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY", kind: "string", secret: true, default: "", doc: "The secret of `accessKeyId`: both are set, or neither." },
  { key: "recordings.s3.prefix", env: "PARLEY_RECORDINGS_S3_PREFIX", kind: "string", default: "recordings/", doc: "Put before `<call id>.wav` in each recording's key." },
  { key: "credits.perMinute", env: "PARLEY_CREDITS_PER_MINUTE", kind: "int", min: 0, max: 1_000_000, default: 1, doc: "Credits charged per started connected minute." },
  { key: "credits.lowBalanceThreshold", env: "PARLEY_CREDITS_LOW_THRESHOLD", kind: "int", min: 0, max: 1_000_000_000, default: 10, doc: "`credits.low` fires when the balance falls below this." },
] as const satisfies readonly SettingRow[];

/** The rows' part of Config. */
type RowConfig = Unflatten<Entry<(typeof ROWS)[number]>>;
type RowEngineConfig = RowConfig["engine"];

/** The engine's settings: its rows, and the provider chains loadConfig builds from the provider rows (provider-settings.ts). */
export interface EngineConfig extends RowEngineConfig {
  /** Speech recognition: the providers in the order they are tried (see provider-settings.ts); the embedded recognizer by default. */
  asr: ProviderChoice[];
  /** What the agents' model names run on, in the order tried: the embedded `rules` dialogue by default. */
  llm: ProviderChoice[];
  /** Speech synthesis, in the order tried: Flite always; each provider adds its voices. */
  tts: ProviderChoice[];
}

/** The configuration: one field per row of ROWS (by its dotted key), the plans' limits and the engine's provider chains. */
export interface Config extends Omit<RowConfig, "engine"> {
  plans: Record<Plan, PlanLimits>;
  engine: EngineConfig;
}

export const DEFAULT_PLAN_LIMITS: Record<Plan, PlanLimits> = {
  pro: { requestsPerMinute: 300, agents: 25, webhooks: 10, concurrentCalls: 10, queuedCalls: 100 },
  agency: { requestsPerMinute: 1000, agents: 250, webhooks: 50, concurrentCalls: 50, queuedCalls: 1000 },
};

/** Each plan limit: its field, its variable's suffix, and what it limits. */
const PLAN_LIMIT_KEYS: Array<[keyof PlanLimits, string, string]> = [
  ["requestsPerMinute", "REQUESTS_PER_MINUTE", "API requests per minute"],
  ["agents", "AGENTS", "agents"],
  ["webhooks", "WEBHOOKS", "webhooks"],
  ["concurrentCalls", "CONCURRENT_CALLS", "calls ringing or in progress at once (more wait queued)"],
  ["queuedCalls", "QUEUED_CALLS", "calls waiting queued"],
];

/** Where the provider rows go in ROWS: after the engine's own. */
const PROVIDER_ROWS_AT = ROWS.findIndex((row) => row.key === "sip.port");

/**
 * Every setting, with its bounds. Exported so that the configuration page of the documentation
 * is checked against it (test/unit/docs/configuration-docs.test.ts): a row added here must be
 * documented in docs/configuration.md.
 */
export const SETTINGS: readonly Setting[] = [
  ...ROWS.slice(0, PROVIDER_ROWS_AT),
  ...providerSettingRows(),
  ...ROWS.slice(PROVIDER_ROWS_AT),
  ...PLANS.flatMap((plan) =>
    PLAN_LIMIT_KEYS.map(([field, suffix, doc]): Setting => ({
      key: `plans.${plan}.${field}`,
      env: `PARLEY_PLAN_${plan.toUpperCase()}_${suffix}`,
      kind: "int",
      min: 0,
      max: 1_000_000,
      default: DEFAULT_PLAN_LIMITS[plan][field],
      doc: `The ${plan} plan's ${doc}.`,
    })),
  ),
];

/** The values unset: each row's default (copied, so that no config shares an array with a row), the plans' limits, empty chains. */
function defaults(): Config {
  // The chains are read as RawStage values, then made chains by loadConfig (stageChain).
  const config: Record<string, unknown> = { plans: structuredClone(DEFAULT_PLAN_LIMITS), engine: { asr: [], llm: [], tts: [] } };
  for (const row of ROWS) setPath(config, row.key, structuredClone(row.default));
  return config as unknown as Config;
}

function parseValue(setting: Setting, raw: unknown, label: string): unknown {
  const fail = (expected: string): never => {
    throw new ConfigError(label, setting.secret ? expected : `${expected} (got ${JSON.stringify(raw)})`);
  };
  switch (setting.kind) {
    case "port":
    case "int": {
      const n = typeof raw === "number" ? raw : typeof raw === "string" && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      const [min, max] = setting.kind === "port" ? [0, 65535] : [setting.min ?? 0, setting.max ?? Number.MAX_SAFE_INTEGER];
      if (!Number.isInteger(n) || n < min || n > max) fail(`must be an integer from ${min} to ${max}`);
      return n;
    }
    case "bool": {
      if (typeof raw === "boolean") return raw;
      const s = String(raw).trim().toLowerCase();
      if (["1", "true", "yes", "on"].includes(s)) return true;
      if (["0", "false", "no", "off"].includes(s)) return false;
      return fail("must be true or false (1/0)");
    }
    case "enum": {
      const values = setting.values ?? [];
      if (typeof raw !== "string" || !values.includes(raw)) fail(`must be one of ${values.join(", ")}`);
      return raw;
    }
    case "url": {
      if (typeof raw !== "string") return fail("must be an http(s) URL");
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        return fail("must be an http(s) URL");
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") fail("must be an http(s) URL");
      return raw.replace(/\/+$/, "");
    }
    case "provider":
      if (!["string", "number", "boolean"].includes(typeof raw)) fail("must be text, a number or true/false");
      return raw;
    case "durations":
      return parseDurations(raw, setting.max ?? 20) ?? fail(`must be a comma-separated list of at most ${setting.max ?? 20} durations such as 1s,5s,30s,2m,10m (units ms, s, m, h; at most 24h each), or "none"`);
    case "string":
    case "path": {
      if (typeof raw !== "string" || raw.trim() === "") fail("must be a non-empty string");
      if (setting.min !== undefined && (raw as string).length < setting.min) fail(`must be at least ${setting.min} characters long`);
      // Buffer.from(hex) would silently stop at the first bad character: the whole value is checked.
      const bytes = setting.hexBytes;
      if (bytes !== undefined && !new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(raw as string)) {
        fail(`must be exactly ${bytes * 2} hex characters (${bytes} random bytes, e.g. from openssl rand -hex ${bytes})`);
      }
      return raw;
    }
  }
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** "1s,5s,2m" (or a JSON array of milliseconds) as milliseconds; "none" is the empty list. Null when invalid. */
function parseDurations(raw: unknown, most: number): number[] | null {
  if (Array.isArray(raw)) return raw.length <= most && raw.every((v) => Number.isInteger(v) && v >= 0 && v <= 86_400_000) ? (raw as number[]) : null;
  if (typeof raw !== "string") return null;
  const text = raw.trim();
  if (text === "none") return [];
  const parts = text.split(",").map((p) => /^(\d+)\s*(ms|s|m|h)$/.exec(p.trim()));
  if (parts.length > most || parts.some((m) => m === null)) return null;
  const values = parts.map((m) => Number(m![1]) * DURATION_UNITS_MS[m![2]!]!);
  return values.every((v) => v <= 86_400_000) ? values : null;
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts[parts.length - 1]!] = value;
}

function getPath(source: unknown, dotted: string): unknown {
  let node: unknown = source;
  for (const part of dotted.split(".")) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** The values of the settings marked `secret` that are set: the logger removes them from every line (see createLogger). */
export function secretValues(config: Config): string[] {
  return [
    ...SETTINGS.filter((s) => s.secret)
      .map((s) => getPath(config, s.key))
      .filter((v): v is string => typeof v === "string" && v !== ""),
    ...chainSecrets([config.engine.asr, config.engine.llm, config.engine.tts]),
  ];
}

/** Every key a config file may hold, for refusing misspelt ones. */
function knownFileKeys(): Set<string> {
  const keys = new Set<string>();
  for (const s of [...SETTINGS, ...CHAIN_FILE_KEYS.map((key) => ({ key }))]) {
    const parts = s.key.split(".");
    for (let i = 1; i <= parts.length; i++) keys.add(parts.slice(0, i).join("."));
  }
  return keys;
}

function checkFileKeys(value: unknown, prefix: string, known: Set<string>, file: string): void {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  for (const [k, v] of Object.entries(value)) {
    const dotted = prefix ? `${prefix}.${k}` : k;
    if (!known.has(dotted)) throw new ConfigError(`${file}: ${dotted}`, RENAMED_FILE_KEYS[dotted] ?? "unknown key");
    checkFileKeys(v, dotted, known, file);
  }
}

/** File keys of earlier versions, and what replaced them. */
const RENAMED_FILE_KEYS: Record<string, string> = {
  "engine.llm.models": "renamed: engine.llm.modelLarge, engine.llm.modelSmall and engine.llm.modelAlt (the variables are unchanged)",
};

/** A bucket name S3 (and its look-alikes) accepts, which cannot step out of the path-style URL; keys given in pairs. */
function checkRecordingBucket(s3: Config["recordings"]["s3"]): void {
  if (!s3.bucket) return;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s3.bucket)) {
    throw new ConfigError("PARLEY_RECORDINGS_S3_BUCKET", `must be a bucket name: 3 to 63 lowercase letters, digits, dots and hyphens (got "${s3.bucket}")`);
  }
  if (Boolean(s3.accessKeyId) !== Boolean(s3.secretAccessKey)) {
    throw new ConfigError(s3.accessKeyId ? "PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY" : "PARLEY_RECORDINGS_S3_ACCESS_KEY_ID", "is required with the other of the pair (or set neither: the SDK's default credentials)");
  }
}

/** The variable naming the configuration file (default: parley.config.json in the working directory). */
export const CONFIG_FILE_ENV = "PARLEY_CONFIG";

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Values that win over every source (tests use this). */
  overrides?: Partial<Config>;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const config = defaults() as unknown as Record<string, unknown>;
  const stages = Object.keys(CONFIG_STAGES) as ConfigStage[];
  // Each stage's rows are read into a RawStage, made a chain once every source is read.
  const engineRaw = config.engine as Record<string, unknown>;
  for (const stage of stages) engineRaw[stage] = {};

  const explicitFile = env[CONFIG_FILE_ENV];
  const file = path.resolve(cwd, explicitFile ?? "parley.config.json");
  if (explicitFile && !existsSync(file)) throw new ConfigError(CONFIG_FILE_ENV, `file not found: ${file}`);
  if (existsSync(file)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new ConfigError(file, `not valid JSON: ${(err as Error).message}`);
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new ConfigError(file, "must hold a JSON object");
    checkFileKeys(parsed, "", knownFileKeys(), path.basename(file));
    for (const setting of SETTINGS) {
      const raw = getPath(parsed, setting.key);
      if (raw !== undefined) setPath(config, setting.key, parseValue(setting, raw, `${path.basename(file)}: ${setting.key}`));
    }
    for (const stage of stages) {
      const chain = getPath(parsed, `engine.${stage}.chain`);
      if (chain !== undefined) (engineRaw[stage] as RawStage).chain = chain;
    }
  }

  for (const setting of SETTINGS) {
    const raw = env[setting.env];
    if (raw !== undefined && raw !== "") setPath(config, setting.key, parseValue(setting, raw, setting.env));
  }

  for (const stage of stages) {
    try {
      engineRaw[stage] = stageChain(stage, engineRaw[stage] as RawStage);
    } catch (err) {
      if (err instanceof ProviderConfigError) throw new ConfigError(err.label, err.message);
      throw err;
    }
  }
  const result = { ...(config as unknown as Config), ...options.overrides };
  const prefixes = result.callPrefixes.trim();
  if (prefixes && prefixes !== "*" && !prefixes.split(",").every((p) => /^\+[1-9]\d{0,5}$/.test(p.trim()))) {
    throw new ConfigError("PARLEY_CALL_PREFIXES", `must be "*" or a comma-separated list of prefixes such as +1,+44 (got "${prefixes}")`);
  }
  const allowed = parseIpNetworkList(result.webhooks.allowNetworks);
  if ("bad" in allowed) {
    throw new ConfigError("PARLEY_WEBHOOK_ALLOW_NETWORKS", `"${allowed.bad}" is not an IP address or CIDR such as 192.168.10.0/24 or fd00:1::/64`);
  }
  if (result.databaseUrl && !isPostgresUrl(result.databaseUrl)) {
    // The value may hold a password: not repeated in the message.
    throw new ConfigError("PARLEY_DATABASE_URL", "must be a PostgreSQL URL such as postgres://parley:password@db.example:5432/parley");
  }
  checkRecordingBucket(result.recordings.s3);
  if (result.node.id && !/^[A-Za-z0-9_.-]{1,64}$/.test(result.node.id)) {
    throw new ConfigError("PARLEY_NODE_ID", `must be 1 to 64 letters, digits, '.', '_' or '-' (got "${result.node.id}")`);
  }
  if (result.node.graceMs < 2 * result.engine.heartbeatMs) {
    throw new ConfigError("PARLEY_NODE_GRACE_MS", `must be at least twice PARLEY_CALL_HEARTBEAT_MS (${result.engine.heartbeatMs} ms): a node beating on time must never look lost`);
  }
  result.dataDir = path.resolve(cwd, result.dataDir);
  if (!result.baseUrl) {
    const host = result.host === "0.0.0.0" || result.host === "::" ? "localhost" : result.host;
    result.baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${result.port}`;
  }
  return Object.freeze(result);
}
