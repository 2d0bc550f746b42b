import type { RedactSetting } from "../../engine/index.js";
import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import { AgentsRepository, isHandoffIntent, type AgentFilters, type AgentHandoff, type AgentIntent, type AgentRecord, type AgentTool, type TransferMode } from "../db/repositories/agents.js";
import { CallsRepository, type CallRecord } from "../db/repositories/calls.js";
import { AGENT_DEFAULTS, ENDPOINTING_MS_DEFAULTS } from "./agent-defaults.js";
import type { AccountsService } from "./accounts.js";
import type { CursorCodec } from "./cursor-codec.js";
import type { DestinationPolicy } from "./destination-policy.js";
import { jsonListPage, type ListQuery } from "./list-page.js";
import { insertWithinLimit, type RowLimit } from "./limited-insert.js";
import { findOwned } from "./ownership.js";
import type { Outbox } from "./outbox.js";
import { agentEventData } from "./resource-event-data.js";
import type { VoiceCatalog } from "./voices.js";
import type { AppointmentReminders } from "./appointment-reminders.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { CALL_OUTCOMES, type CallOutcome } from "../../engine/index.js";
import { knownZone } from "../core/zoned-time.js";
import { grants, needsPermissionToo } from "./permissions.js";
import type { AnalysisFieldType, EndpointingMode } from "../../engine/index.js";
import type { AgentModel } from "./agent-defaults.js";
import type { SecretsService } from "./secrets.js";
import type { KnowledgeBasesService } from "./knowledge-bases.js";
import { argumentsChecker, secretNamesOf } from "./http-tool-rules.js";
import type { WebhookTargets } from "./webhook-targets.js";

/** An agent's analysis field, as an agent is created or updated with it. */
export interface AnalysisFieldInput {
  name: string;
  type: AnalysisFieldType;
  description: string;
  enum?: string[];
}

/** What an agent is created with (POST /v1/agents, validated; defaults filled by the service). */
export interface CreateAgentInput {
  name: string;
  voice_id: string;
  language?: string;
  metadata?: Record<string, unknown>;
  model?: AgentModel;
  temperature?: number;
  transfer_number?: string | null;
  system_prompt?: string;
  first_message?: string | null;
  max_tokens?: number;
  interruption_threshold?: number;
  end_call_phrases?: string[];
  transfer_enabled?: boolean;
  transfer_message?: string;
  transfer_mode?: TransferMode;
  endpointing_ms?: number;
  analysis_fields?: AnalysisFieldInput[];
  tools?: AgentTool[];
  intents?: AgentIntent[];
  knowledge_base_ids?: string[];
  handoffs?: AgentHandoff[];
  redact?: RedactSetting;
  reminder_minutes_before?: number | null;
  reminder_call?: boolean;
  endpointing_mode?: EndpointingMode;
  reminder_call_inbound?: boolean;
}

/** What an agent update may change (PATCH /v1/agents/{id}): any field, and its status. */
export interface UpdateAgentInput extends Partial<CreateAgentInput> {
  status?: "active" | "inactive";
}

export interface AgentStats {
  total_calls: number;
  total_duration_minutes: number;
  avg_call_duration_seconds: number;
  success_rate: number;
  /** The agent's analysed calls by outcome, every outcome listed (0 when none). */
  outcomes: Record<CallOutcome, number>;
}

const RECENT_CALLS = 10;
const NOT_FOUND = { code: "agent_not_found", message: "No agent with this id" };

/** Agents: create within the plan's limit, list, read with stats, update, soft-delete. */
export class AgentsService {
  private readonly agents: AgentsRepository;
  private readonly calls: CallsRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: {
      accounts: AccountsService;
      voices: VoiceCatalog;
      cursors: CursorCodec;
      destinations: DestinationPolicy;
      outbox: Outbox;
      reminders: AppointmentReminders;
      /** Where a tool's URL may point (the webhook network policy). */
      targets: Pick<WebhookTargets, "checkForStorage">;
      secrets: Pick<SecretsService, "resolve">;
      knowledgeBases: Pick<KnowledgeBasesService, "get">;
    },
  ) {
    this.agents = new AgentsRepository(db);
    this.calls = new CallsRepository(db);
  }

  /** `permissions` are the calling key's: see `checkReminderCallSettings`. */
  async create(account: AccountRecord, input: CreateAgentInput, permissions: readonly string[]): Promise<AgentRecord> {
    const at = nowIso();
    const endpointingMode = input.endpointing_mode ?? AGENT_DEFAULTS.endpointing_mode;
    const agent: AgentRecord = {
      id: newId("agent"),
      account_id: account.id,
      name: input.name.trim(),
      system_prompt: input.system_prompt!,
      voice_id: input.voice_id,
      first_message: input.first_message ?? AGENT_DEFAULTS.first_message,
      language: input.language ?? AGENT_DEFAULTS.language,
      model: input.model ?? AGENT_DEFAULTS.model,
      temperature: input.temperature ?? AGENT_DEFAULTS.temperature,
      max_tokens: input.max_tokens ?? AGENT_DEFAULTS.max_tokens,
      interruption_threshold: input.interruption_threshold ?? AGENT_DEFAULTS.interruption_threshold,
      end_call_phrases: input.end_call_phrases ?? [...AGENT_DEFAULTS.end_call_phrases],
      status: "active",
      metadata: input.metadata ?? { ...AGENT_DEFAULTS.metadata },
      transfer_enabled: input.transfer_enabled ?? AGENT_DEFAULTS.transfer_enabled,
      transfer_number: input.transfer_number ?? AGENT_DEFAULTS.transfer_number,
      transfer_message: input.transfer_message ?? AGENT_DEFAULTS.transfer_message,
      transfer_mode: input.transfer_mode ?? AGENT_DEFAULTS.transfer_mode,
      endpointing_mode: endpointingMode,
      endpointing_ms: input.endpointing_ms ?? ENDPOINTING_MS_DEFAULTS[endpointingMode],
      analysis_fields: input.analysis_fields ?? [],
      tools: input.tools ?? [],
      intents: input.intents ?? [],
      knowledge_base_ids: input.knowledge_base_ids ?? [],
      handoffs: input.handoffs ?? [],
      redact: input.redact ?? [],
      reminder_minutes_before: input.reminder_minutes_before === undefined ? AGENT_DEFAULTS.reminder_minutes_before : input.reminder_minutes_before,
      reminder_call: input.reminder_call ?? AGENT_DEFAULTS.reminder_call,
      reminder_call_inbound: input.reminder_call_inbound ?? AGENT_DEFAULTS.reminder_call_inbound,
      created_at: at,
      updated_at: at,
      deleted_at: null,
    };
    checkReminderCallSettings(undefined, agent, permissions);
    checkToolPermission(undefined, agent, permissions);
    await this.checkSettings(agent);
    const limit = this.deps.accounts.limitsOf(account).agents;
    const agentLimit: RowLimit = {
      limit,
      accountId: account.id,
      count: (trx) => this.agents.countLive(account.id, trx),
      refusal: () => new ApiError(402, "agent_limit_reached", `The ${account.plan} plan allows ${limit} agents; delete one or upgrade`),
    };
    await insertWithinLimit(this.db, agentLimit, async (trx) => {
      await this.agents.insert(agent, trx);
      await this.deps.outbox.append([{ accountId: account.id, name: "agent.created", data: agentEventData(agent) }], trx);
    });
    return agent;
  }

  async get(accountId: string, id: string): Promise<AgentRecord> {
    return findOwned(await this.agents.findById(id), accountId, NOT_FOUND);
  }

  list(accountId: string, filters: AgentFilters, query: ListQuery) {
    return jsonListPage({
      codec: this.deps.cursors,
      list: "agents",
      filters: { ...filters },
      query,
      fetch: (page) => this.agents.page(accountId, filters, page),
      count: () => this.agents.count(accountId, filters),
    });
  }

  async update(accountId: string, id: string, input: UpdateAgentInput, permissions: readonly string[]): Promise<AgentRecord> {
    const current = await this.get(accountId, id);
    const patch = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<AgentRecord>;
    if (typeof patch.name === "string") patch.name = patch.name.trim();
    // A new mode without an endpointing_ms takes that mode's default: an adaptive agent's
    // 1,500 ms ceiling would be a long fixed wait.
    if (patch.endpointing_mode !== undefined && patch.endpointing_mode !== current.endpointing_mode && patch.endpointing_ms === undefined) {
      patch.endpointing_ms = ENDPOINTING_MS_DEFAULTS[patch.endpointing_mode];
    }
    const next: AgentRecord = { ...current, ...patch };
    checkReminderCallSettings(current, next, permissions);
    checkToolPermission(current, next, permissions);
    await this.checkSettings(next);
    if (patch.language !== undefined) patch.language = next.language;
    const at = nextUpdatedAt(current.updated_at);
    next.updated_at = at;
    const replan = patch.reminder_minutes_before !== undefined || patch.metadata !== undefined;
    await this.db.transaction().execute(async (trx) => {
      await this.agents.update(id, { ...patch, updated_at: at }, trx);
      const data = { ...agentEventData(next), changed: Object.keys(patch).sort() };
      await this.deps.outbox.append([{ accountId, name: "agent.updated", data }], trx);
      // A new lead time or time zone moves the reminders still to come.
      if (replan) await this.deps.reminders.replanAgent(next, trx);
    });
    if (replan) this.deps.reminders.wake();
    return next;
  }

  async delete(accountId: string, id: string): Promise<void> {
    const agent = await this.get(accountId, id);
    await this.db.transaction().execute(async (trx) => {
      const active = await this.calls.countActiveForAgent(id, trx);
      if (active > 0) {
        throw new ApiError(409, "agent_in_use", `The agent has ${active} active call(s); end them or wait until they finish`);
      }
      const at = nowIso();
      await this.agents.softDelete(id, at, trx);
      await trx.updateTable("phone_numbers").set({ default_agent_id: null, updated_at: at }).where("default_agent_id", "=", id).execute();
      const data = { ...agentEventData({ ...agent, status: "inactive", updated_at: at }), deleted: true, deleted_at: at };
      await this.deps.outbox.append([{ accountId, name: "agent.deleted", data }], trx);
    });
  }

  async stats(accountId: string, id: string): Promise<AgentStats> {
    const [s, outcomes] = await Promise.all([this.calls.stats(accountId, { agentId: id }), this.calls.outcomeCounts(accountId, id)]);
    return {
      outcomes: Object.fromEntries(CALL_OUTCOMES.map((o) => [o, outcomes.get(o) ?? 0])) as Record<CallOutcome, number>,
      total_calls: s.total_calls,
      total_duration_minutes: s.total_minutes,
      avg_call_duration_seconds: s.connected_calls === 0 ? 0 : Math.round((s.total_duration_seconds / s.connected_calls) * 10) / 10,
      success_rate: s.ended_calls === 0 ? 0 : Math.round((s.successful_calls / s.ended_calls) * 10_000) / 10_000,
    };
  }

  recentCalls(accountId: string, id: string): Promise<CallRecord[]> {
    return this.calls.recent(accountId, { agentId: id }, RECENT_CALLS);
  }

  /** Rules that involve the voice catalog or several fields. */
  private async checkSettings(agent: AgentRecord): Promise<void> {
    const voice = this.deps.voices.get(agent.voice_id);
    if (!voice) {
      throw ApiError.field("invalid_voice_id", "voice_id", `no voice '${agent.voice_id}'; GET /v1/voices lists the available voices`);
    }
    const language = this.deps.voices.languages().find((l) => l.toLowerCase() === agent.language.toLowerCase());
    if (!language) {
      throw ApiError.field(
        "invalid_language",
        "language",
        `language '${agent.language}' is not supported; supported: ${this.deps.voices.languages().join(", ")}`,
      );
    }
    agent.language = language;
    if (agent.transfer_enabled && !agent.transfer_number) {
      throw ApiError.field("invalid_request", "transfer_number", "is required when transfer_enabled is true");
    }
    if (agent.transfer_number) await this.deps.destinations.checkTransfer(agent.account_id, agent.transfer_number, "transfer_number");
    if (agent.reminder_call && agent.reminder_minutes_before === null) {
      throw ApiError.field("invalid_request", "reminder_call", "needs reminder_minutes_before: a reminder call is placed at the reminder's time");
    }
    await this.checkTools(agent);
    await this.checkHandoffs(agent);
    checkIntents(agent);
    for (const [i, id] of agent.knowledge_base_ids.entries()) {
      await this.deps.knowledgeBases.get(agent.account_id, id).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) throw ApiError.field("knowledge_base_not_found", `knowledge_base_ids[${i}]`, `no knowledge base ${id} in this account`);
        throw err;
      });
    }
  }

  /**
   * Each hand-off names another live agent of the same account. Another account's agent gets
   * the same answer as an unknown id (400 `agent_not_found`), so ids cannot be probed across
   * accounts. Checked on every write, as knowledge_base_ids are: a hand-off to an agent deleted
   * since must be removed before the agent is saved again.
   */
  private async checkHandoffs(agent: AgentRecord): Promise<void> {
    for (const [i, { agent_id }] of agent.handoffs.entries()) {
      const field = `handoffs[${i}].agent_id`;
      if (agent_id === agent.id) throw ApiError.field("invalid_request", field, "is this agent itself; a hand-off passes the caller to another agent");
      const target = await this.agents.findById(agent_id);
      if (!target || target.account_id !== agent.account_id) throw ApiError.field("agent_not_found", field, `no agent ${agent_id} in this account`);
    }
  }

  /**
   * Each tool's URL under the webhook network policy (no connection is made: the receiver may
   * not be up yet), a parameters schema its arguments can be checked against, and every secret
   * it names present in the account.
   */
  private async checkTools(agent: AgentRecord): Promise<void> {
    const secrets = await this.deps.secrets.resolve(agent.account_id, [...new Set(agent.tools.flatMap(secretNamesOf))]);
    for (const [i, tool] of agent.tools.entries()) {
      await this.deps.targets.checkForStorage(agent.account_id, tool.url, { field: `tools[${i}].url`, probe: false });
      try {
        argumentsChecker(tool.parameters);
      } catch (err) {
        throw ApiError.field("invalid_request", `tools[${i}].parameters`, `is not a JSON Schema Parley can check arguments with: ${(err as Error).message}`);
      }
      const missing = secretNamesOf(tool).find((name) => !secrets.has(name));
      if (missing !== undefined) {
        const field = missing === tool.signing_secret ? `tools[${i}].signing_secret` : `tools[${i}].headers`;
        throw ApiError.field("secret_not_found", field, `no secret named ${missing}; create it first with POST /v1/secrets`);
      }
    }
  }
}

/**
 * An agent whose reminders call its customers places calls from the business's number: turning
 * that on (`reminder_call`), widening it to inbound callers' caller IDs
 * (`reminder_call_inbound`), or moving when the calls ring (`reminder_minutes_before`,
 * `metadata.timezone`) while it is on, needs `calls:write` besides `agents:write` (403
 * `forbidden` naming the fields), as aiming one appointment's reminder call does.
 */
function checkReminderCallSettings(current: AgentRecord | undefined, next: AgentRecord, permissions: readonly string[]): void {
  if (!next.reminder_call || grants(permissions, "calls:write")) return;
  const fields: string[] = [];
  if (!current?.reminder_call) fields.push("reminder_call");
  else {
    if (next.reminder_call_inbound && !current.reminder_call_inbound) fields.push("reminder_call_inbound");
    if (next.reminder_minutes_before !== current.reminder_minutes_before) fields.push("reminder_minutes_before");
    if (knownZone(next.metadata.timezone) !== knownZone(current.metadata.timezone)) fields.push("metadata.timezone");
  }
  if (fields.length > 0) throw needsPermissionToo("calls:write", fields, "this agent's reminders call its customers, so this change");
}

/**
 * A tool sends the account's secrets (its signing key, `{{secrets.NAME}}` headers) to its URL
 * whenever a call uses it: setting or changing `tools` needs `secrets:write` besides
 * `agents:write` (403 `forbidden`), or a key that may not touch secrets could have their
 * values sent to an address of its choosing.
 */
function checkToolPermission(current: AgentRecord | undefined, next: AgentRecord, permissions: readonly string[]): void {
  if (grants(permissions, "secrets:write")) return;
  const unchanged = JSON.stringify(current?.tools ?? []) === JSON.stringify(next.tools);
  if (!unchanged) throw needsPermissionToo("secrets:write", ["tools"], "tools send the account's secrets to their URLs, so changing them");
}

/**
 * Each intent names one of the agent's tools, and asks only for that tool's parameters; or
 * hands off to one of the agent's `handoffs`.
 */
function checkIntents(agent: AgentRecord): void {
  for (const [i, intent] of agent.intents.entries()) {
    if (isHandoffIntent(intent)) {
      if (agent.handoffs.some((h) => h.agent_id === intent.handoff_to)) continue;
      const ids = agent.handoffs.map((h) => h.agent_id);
      throw ApiError.field("invalid_request", `intents[${i}].handoff_to`, `${intent.handoff_to} is not one of this agent's hand-offs${ids.length ? `: ${ids.join(", ")}` : "; add it to handoffs"}`);
    }
    const tool = agent.tools.find((t) => t.name === intent.tool);
    if (!tool) {
      const names = agent.tools.map((t) => t.name);
      throw ApiError.field("invalid_request", `intents[${i}].tool`, `no tool named ${intent.tool} on this agent${names.length ? `; its tools: ${names.join(", ")}` : "; add it to tools"}`);
    }
    const properties = tool.parameters.properties;
    const parameters = typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
    for (const [j, slot] of intent.slots.entries()) {
      if (!parameters.includes(slot.name)) {
        throw ApiError.field("invalid_request", `intents[${i}].slots[${j}].name`, `${slot.name} is not a parameter of ${tool.name} (${parameters.join(", ") || "it has none"})`);
      }
    }
  }
}
