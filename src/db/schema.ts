/**
 * Table types. JSON columns hold text (parsed in repositories); booleans are 0/1 integers;
 * timestamps are UTC ISO 8601 text, which sorts in time order.
 */

export interface AccountTable {
  id: string;
  name: string;
  plan: string;
  credit_balance: number;
  signing_secret: string;
  /** SHA-256 hex of the media token (`/media/twilio`); null until one is made. The token itself is never stored. */
  media_token_hash: string | null;
  media_token_created_at: string | null;
  /** JSON object of per-account limit overrides (keys of PlanLimits). */
  limit_overrides: string;
  /** `credits.low` fires when a charge takes the balance below this; null: the configured default. */
  low_balance_threshold: number | null;
  /** Days an ended call keeps its content (recording, transcript, analysis); null: the configured default; 0: for ever. */
  retention_days: number | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyTable {
  id: string;
  account_id: string;
  name: string;
  /** SHA-256 hex of the full key; the key itself is never stored. */
  key_hash: string;
  /** First characters of the key, to tell keys apart in listings. */
  key_prefix: string;
  /** JSON array of permission names, `["*"]` for all. */
  permissions: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface AgentTable {
  id: string;
  account_id: string;
  name: string;
  system_prompt: string;
  voice_id: string;
  first_message: string | null;
  language: string;
  model: string;
  temperature: number;
  max_tokens: number;
  interruption_threshold: number;
  end_call_phrases: string;
  status: string;
  metadata: string;
  transfer_enabled: number;
  transfer_number: string | null;
  transfer_message: string;
  /** `cold` or `warm` (TRANSFER_MODES); agents stored before migration 033 are `cold`. */
  transfer_mode: string;
  /** `adaptive` or `fixed` (the engine's ENDPOINTING_MODES); agents stored before migration 010 are `fixed`. */
  endpointing_mode: string;
  /** Silence that ends the caller's turn (`fixed`), or the most the wait lasts (`adaptive`). */
  endpointing_ms: number;
  /** JSON array of the fields each call's analysis reads ({name, type, description, enum?}). */
  analysis_fields: string;
  /** How long before each of its appointments the reminder goes; null: no reminders. */
  reminder_minutes_before: number | null;
  /** 1: a reminder also places a call to the customer. */
  reminder_call: number;
  /** 1: a reminder call may dial the number an inbound caller's caller ID gave (migration 018). */
  reminder_call_inbound: number;
  /** JSON array of the agent's custom HTTP tools (AgentTool, migration 028). */
  tools: string;
  /** JSON array of the agent's intents (AgentIntent, migration 030). */
  intents: string;
  /** JSON array of the ids of the knowledge bases the agent answers from (migration 031). */
  knowledge_base_ids: string;
  /** JSON array of the agents a call may be passed to ({agent_id, description}, AgentHandoff, migration 032). */
  handoffs: string;
  /** JSON: what the agent's calls must not keep (see migration 035). */
  redact: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface PhoneNumberTable {
  id: string;
  account_id: string;
  phone_number: string;
  friendly_name: string;
  country: string;
  region: string | null;
  capability_voice: number;
  capability_sms: number;
  /** `pending` (claimed through the API), `active` (approved, or added by the operator) or `inactive` (released). */
  status: string;
  default_agent_id: string | null;
  /** The carrier the number is held at (one of CARRIERS); null: the service's default, PARLEY_CARRIER (migration 024). */
  carrier: string | null;
  /** When the operator approved the number for this account (or added it); null if never, or withdrawn by a rejection. */
  approved_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CallTable {
  id: string;
  account_id: string;
  agent_id: string;
  campaign_id: string | null;
  /** The campaign contact this call is an attempt for. */
  contact_id: string | null;
  direction: string;
  status: string;
  /** Null on web calls, which have no phone numbers. */
  phone_number: string | null;
  from_number: string | null;
  metadata: string;
  context: string;
  record: number;
  max_duration: number;
  webhook_url: string | null;
  duration: number | null;
  transcript: string | null;
  recording_path: string | null;
  analysis: string | null;
  /** The analysis's outcome, as a column to list calls by. */
  outcome: string | null;
  /** JSON array of the agent's actions on the call (the engine's CallAction), from which the analysis is made. */
  actions: string | null;
  /** The engine's end reason (`caller_hangup`, `voicemail`, ...); null for calls that never connected. */
  end_reason: string | null;
  transfer_number: string | null;
  /** Why Parley ended the call as failed (`interrupted`, `insufficient_credits`, ...). */
  failure_reason: string | null;
  /** JSON of each agent turn's latency and the call's voice-to-voice percentiles. */
  latency: string | null;
  /** 1 while a model writes the analysis: the call's end events are written with it. */
  analysis_pending: number;
  /** The appointment a reminder call is about. */
  appointment_id: string | null;
  /** The node running the call's media while it is live (see migration 019); null before. */
  node_id: string | null;
  billed_credits: number | null;
  created_at: string;
  answered_at: string | null;
  ended_at: string | null;
  updated_at: string;
}

export interface WebhookTable {
  id: string;
  account_id: string;
  url: string;
  events: string;
  secret: string;
  description: string | null;
  status: string;
  metadata: string;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

/** An account's secret (issue 31): write-only through the API, read by custom HTTP tools. */
export interface SecretTable {
  account_id: string;
  /** `^[A-Za-z_][A-Za-z0-9_]{0,63}$`, unique in the account. */
  name: string;
  value: string;
  created_at: string;
  updated_at: string;
}

/** A knowledge base (issue 31): documents an account's agents answer callers from. */
export interface KnowledgeBaseTable {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** A document uploaded into a knowledge base: its text lives in its passages, the upload itself is not kept. */
export interface KbDocumentTable {
  id: string;
  knowledge_base_id: string;
  account_id: string;
  name: string;
  /** One of DOCUMENT_TYPES (document-text.ts), without parameters. */
  content_type: string;
  /** Size of the upload. */
  bytes: number;
  /** How many passages it was cut into. */
  passages: number;
  created_at: string;
}

/**
 * A passage of a document, the unit search answers with. Indexed for full-text search by
 * migration 029 (SQLite: FTS5 table kb_passages_fts over the `seq` rowid, kept by triggers;
 * PostgreSQL: a GIN index on to_tsvector('english', text)). SQLite's `seq` (the FTS5 rowid; on
 * PostgreSQL an unused column of the same name) is given by the database, never written by code.
 */
export interface KbPassageTable {
  id: string;
  document_id: string;
  knowledge_base_id: string;
  account_id: string;
  /** Order in its document, from 0. */
  position: number;
  text: string;
}

export interface CampaignTable {
  id: string;
  account_id: string;
  name: string;
  agent_id: string;
  status: string;
  max_concurrent: number;
  retry_no_answer: number;
  schedule: string | null;
  contact_count: number;
  /** The number calls are placed from; null: the account's oldest active number when each call is made. */
  from_number: string | null;
  /** Calls per contact at most when busy / no answer are retried. */
  max_attempts: number;
  retry_delay_minutes: number;
  /** JSON {start, end, days}; null: DEFAULT_CALLING_HOURS. */
  calling_hours: string | null;
  /** The zone of contacts whose own zone is not known (IANA name). */
  timezone: string | null;
  /** Why a paused campaign is paused (`requested`, `insufficient_credits`, `agent_inactive`, ...). */
  paused_reason: string | null;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface CampaignContactTable {
  id: string;
  campaign_id: string;
  position: number;
  phone: string;
  context: string;
  status: string;
  call_id: string | null;
  attempts: number;
  /** The contact's own IANA zone, as given. */
  timezone: string | null;
  /** The zone key its calling hours are read in (an IANA name or `country:XX`); null until resolved. */
  zone: string | null;
  /** When a retry may be made (ms since the epoch); null: now. */
  next_attempt_at: number | null;
  /** Attempts that ended `failed`. */
  failures: number;
  /** Why the contact ended as it did (e.g. `do_not_call` for a skipped contact). */
  reason: string | null;
  updated_at: string;
}

/** An account's do-not-call list: numbers that no campaign or API call dials. */
export interface DoNotCallTable {
  id: string;
  account_id: string;
  phone_number: string;
  /** `api` or `callee_request`. */
  source: string;
  /** The call on which the callee asked, for `callee_request`. */
  call_id: string | null;
  created_at: string;
}

export interface AppointmentTable {
  id: string;
  account_id: string;
  call_id: string | null;
  agent_id: string | null;
  customer_name: string | null;
  customer_phone: string | null;
  customer_email: string | null;
  date: string;
  time: string;
  service: string | null;
  duration_minutes: number;
  notes: string | null;
  status: string;
  /** When the reminder is due, ms since the epoch; null: none. */
  reminder_at: number | null;
  /** `pending`, `sent`, `skipped` (the appointment was cancelled), or null (no reminder). */
  reminder_status: string | null;
  /** The reminder call placed, if any. */
  reminder_call_id: string | null;
  /** When the customer confirmed they will come (on a reminder call). */
  confirmed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface LedgerTable {
  id: string;
  account_id: string;
  /** Signed: grants are positive, charges negative. */
  amount: number;
  balance_after: number;
  reason: string;
  call_id: string | null;
  description: string | null;
  created_at: string;
}

export interface IdempotencyTable {
  account_id: string;
  method: string;
  path: string;
  idempotency_key: string;
  body_hash: string;
  /** `running` until the first response is final, then `done`. */
  state: string;
  status_code: number | null;
  /** The response's JSON; the route's secret fields in it are null (migration 016). */
  response_body: string | null;
  /** Those fields' values, encrypted under a key only the caller's API key gives; null when it had none. */
  sealed_secrets: string | null;
  created_at: string;
}

/** The event outbox (see migration 003): one row per event, written with the change it reports. */
export interface EventTable {
  id: string;
  account_id: string;
  /** The event's name in the subscription list (`call.started`, not its alias `call.initiated`). */
  name: string;
  /** The call the event is about, if any. */
  call_id: string | null;
  /** JSON object: the envelope's `data`. */
  data: string;
  /** Increases in the order events were stored: receivers order by it. */
  seq: number;
  created_at: string;
}

/** One event on its way to one receiver (see migration 006); the id is stable across attempts. */
export interface DeliveryTable {
  id: string;
  account_id: string;
  event_id: string;
  /** The receiving webhook; null for a call's own `webhook_url`. */
  webhook_id: string | null;
  /** The call's `webhook_url` (null for webhook deliveries, which go to the webhook's current URL). */
  url: string | null;
  /** The webhook's id, or `call:<call id>`: work is bounded per receiver. */
  receiver: string;
  /** The name it is delivered under (a webhook subscribed to an alias gets the alias). */
  event_name: string;
  status: string;
  attempt_count: number;
  /** When the next attempt is due (ms since the epoch); null once final. */
  next_attempt_at: number | null;
  /** While `sending`: until when the worker that claimed it holds it (ms since the epoch). */
  lease_until: number | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

/** The delivery log: one row per attempt. */
export interface DeliveryAttemptTable {
  delivery_id: string;
  /** 1 for the first attempt. */
  number: number;
  started_at: string;
  duration_ms: number;
  /** The receiver's HTTP status; null when none came (timeout, refused, connection error). */
  status_code: number | null;
  error: string | null;
  /** The start of the receiver's answer, truncated. */
  response_body: string | null;
}

/** A browser call's single-use token (see migration 011). */
export interface WebCallTokenTable {
  token_hash: string;
  account_id: string;
  agent_id: string;
  /** The id the call gets when the browser connects. */
  call_id: string;
  /** JSON object: the call's context. */
  context: string;
  record: number;
  max_duration: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** Calls per account, direction and status, kept by triggers on `calls` (migration 015). */
export interface CallCountTable {
  account_id: string;
  direction: string;
  status: string;
  n: number;
}

/** A Parley process sharing the database (see migration 019). */
export interface NodeTable {
  id: string;
  started_at: string;
  /** Milliseconds since the epoch of its last heartbeat. */
  heartbeat_at: number;
  /** Set when it stopped gracefully (its calls were ended and stored). */
  stopped_at: string | null;
}

/** The minutes a call under way holds of its account's credit until it is charged (see migration 020, CreditReservations). */
export interface CreditHoldTable {
  call_id: string;
  account_id: string;
  minutes: number;
  /** The node that made the hold. */
  node_id: string;
  created_at: string;
}

/** A live control for the node that runs a call (`end`), deleted once that node has acted on it. */
export interface CallCommandTable {
  id: string;
  node_id: string;
  call_id: string;
  command: string;
  /** The text of a `say` or `whisper`; null for the others. */
  payload: string | null;
  created_at: string;
}

/** A single-use token for `/media/listen` (see migration 036). */
export interface ListenTokenTable {
  token_hash: string;
  account_id: string;
  call_id: string;
  /** `listen` or `takeover`. */
  mode: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** A request-rate window shared by the nodes (see SharedRateLimiter). */
export interface RateWindowTable {
  key: string;
  window_start: number;
  count: number;
  leased: number;
}

/** A carrier media stream's single-use token (see CarrierStreamTokens). */
export interface CarrierStreamTokenTable {
  token_hash: string;
  carrier: string;
  account_id: string;
  /** `inbound` (the carrier's voice webhook) or `outbound` (a call Parley placed through it). */
  direction: string;
  call_id: string | null;
  agent_id: string | null;
  phone_number: string | null;
  from_number: string | null;
  /** The carrier's id of the call (Twilio's CallSid), when known as the token is made. */
  carrier_call_id: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** An agent test run (see migration 034): its scenarios and their results as JSON text. */
export interface TestRunTable {
  id: string;
  account_id: string;
  agent_id: string;
  /** running | passed | failed | error */
  status: string;
  scenarios: string;
  /** How many scenarios `scenarios` holds (summed for the daily allowance). */
  scenario_count: number;
  results: string;
  error: string | null;
  /** The node carrying the run while it is `running`. */
  node_id: string | null;
  created_at: string;
  completed_at: string | null;
}

/** A recording for test runs' callers (see migration 037): 8 kHz PCM16 little-endian. */
export interface TestAudioTable {
  id: string;
  account_id: string;
  name: string;
  duration_ms: number;
  samples: Buffer;
  created_at: string;
}

export interface Database {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  agents: AgentTable;
  phone_numbers: PhoneNumberTable;
  calls: CallTable;
  call_counts: CallCountTable;
  credit_holds: CreditHoldTable;
  webhooks: WebhookTable;
  campaigns: CampaignTable;
  campaign_contacts: CampaignContactTable;
  appointments: AppointmentTable;
  ledger: LedgerTable;
  idempotency_keys: IdempotencyTable;
  events: EventTable;
  deliveries: DeliveryTable;
  delivery_attempts: DeliveryAttemptTable;
  do_not_call: DoNotCallTable;
  web_call_tokens: WebCallTokenTable;
  nodes: NodeTable;
  call_commands: CallCommandTable;
  rate_windows: RateWindowTable;
  carrier_stream_tokens: CarrierStreamTokenTable;
  secrets: SecretTable;
  knowledge_bases: KnowledgeBaseTable;
  kb_documents: KbDocumentTable;
  kb_passages: KbPassageTable;
  test_runs: TestRunTable;
  listen_tokens: ListenTokenTable;
  test_audio: TestAudioTable;
}
