import { sql } from "kysely";
import type { AnalysisField, EndpointingMode, RedactSetting } from "../../../engine/index.js";
import type { Db } from "../database.js";
import type { AgentTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";
import { jsonListSelection, shapedPage, type JsonListRow, type Page, type PageRequest } from "./keyset.js";
import { jsonField, type JsonFields } from "../json-object.js";
import { QueryShapes } from "../query-shapes.js";
import { isPostgres } from "../dialect.js";

export const AGENT_STATUSES = ["active", "inactive"] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/**
 * How a call is passed to `transfer_number` (issue 31): `cold` hands it over at once (SIP REFER,
 * the carrier's transfer); `warm` has Parley call the person first and tell them what the call
 * is about before connecting the caller.
 */
export const TRANSFER_MODES = ["cold", "warm"] as const;
export type TransferMode = (typeof TRANSFER_MODES)[number];

/**
 * A custom HTTP tool of an agent, as stored and shown (`tools` on the agent). When the dialogue
 * calls it, Parley POSTs the arguments to `url`, signed with the account secret named
 * `signing_secret`; header values may hold `{{secrets.NAME}}`, filled in only for the request.
 */
export interface AgentTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object). */
  parameters: Record<string, unknown>;
  url: string;
  method: "POST";
  timeout_ms: number;
  headers: Record<string, string>;
  signing_secret: string;
}

/**
 * A request the `rules` dialogue answers with one of the agent's tools (`intents` on the agent;
 * the engine's DialogueIntent): callers' phrasings, the tool, the arguments it asks for with
 * their questions, and what it says after (`{{key}}` from the tool's answer) or on failure.
 */
export interface AgentToolIntent {
  examples: string[];
  tool: string;
  slots: Array<{ name: string; question: string }>;
  reply: string;
  failure: string;
}

/**
 * A request the `rules` dialogue answers by passing the caller to another agent: callers'
 * phrasings, the agent (one of the agent's `handoffs`), and what it says before passing them on.
 */
export interface AgentHandoffIntent {
  examples: string[];
  handoff_to: string;
  reply: string;
}

/** An intent of a `rules` agent: answered with a tool, or with a hand-off. */
export type AgentIntent = AgentToolIntent | AgentHandoffIntent;

export function isHandoffIntent(intent: AgentIntent): intent is AgentHandoffIntent {
  return "handoff_to" in intent;
}

/**
 * Another agent of the same account a call may be passed to (`handoffs` on the agent, issue 31):
 * its voice, prompt and tools take over the call. `description` says when (the model reads it).
 */
export interface AgentHandoff {
  agent_id: string;
  description: string;
}

export interface AgentRecord
  extends Omit<AgentTable, "end_call_phrases" | "metadata" | "transfer_enabled" | "status" | "analysis_fields" | "reminder_call" | "reminder_call_inbound" | "endpointing_mode" | "transfer_mode" | "tools" | "intents" | "knowledge_base_ids" | "handoffs" | "redact"> {
  reminder_call: boolean;
  reminder_call_inbound: boolean;
  endpointing_mode: EndpointingMode;
  end_call_phrases: string[];
  analysis_fields: AnalysisField[];
  tools: AgentTool[];
  intents: AgentIntent[];
  knowledge_base_ids: string[];
  handoffs: AgentHandoff[];
  /** What the agent's calls must not keep (engine/text/redaction). */
  redact: RedactSetting;
  metadata: Record<string, unknown>;
  transfer_enabled: boolean;
  transfer_mode: TransferMode;
  status: AgentStatus;
}

/**
 * An item of the agent list (GET /v1/agents): not the agent's prompt or settings.
 * Its JSON is kept in the list's index (migration 014): a change here needs a migration that
 * indexes the new expression (the plan test fails until then).
 */
const AGENT_LIST_ITEM: JsonFields = {
  id: jsonField.value("id"),
  name: jsonField.value("name"),
  voice_id: jsonField.value("voice_id"),
  language: jsonField.value("language"),
  model: jsonField.value("model"),
  status: jsonField.value("status"),
  created_at: jsonField.value("created_at"),
  updated_at: jsonField.value("updated_at"),
};

export interface AgentFilters {
  status?: AgentStatus | undefined;
  search?: string | undefined;
}

function toRecord(row: AgentTable): AgentRecord {
  return {
    ...row,
    end_call_phrases: parseJson<string[]>(row.end_call_phrases) ?? [],
    analysis_fields: parseJson<AnalysisField[]>(row.analysis_fields) ?? [],
    tools: parseJson<AgentTool[]>(row.tools) ?? [],
    intents: parseJson<AgentIntent[]>(row.intents) ?? [],
    knowledge_base_ids: parseJson<string[]>(row.knowledge_base_ids) ?? [],
    handoffs: parseJson<AgentHandoff[]>(row.handoffs) ?? [],
    redact: parseJson<RedactSetting>(row.redact) ?? [],
    reminder_call: row.reminder_call === 1,
    reminder_call_inbound: row.reminder_call_inbound === 1,
    metadata: parseJson<Record<string, unknown>>(row.metadata) ?? {},
    transfer_enabled: row.transfer_enabled === 1,
    status: row.status as AgentStatus,
    endpointing_mode: row.endpointing_mode as EndpointingMode,
    transfer_mode: row.transfer_mode as TransferMode,
  };
}

function toRow(record: Partial<AgentRecord>): Partial<AgentTable> {
  const { end_call_phrases, metadata, transfer_enabled, analysis_fields, tools, intents, knowledge_base_ids, handoffs, redact, reminder_call, reminder_call_inbound, ...rest } = record;
  return {
    ...rest,
    ...(tools !== undefined ? { tools: toJson(tools) } : {}),
    ...(intents !== undefined ? { intents: toJson(intents) } : {}),
    ...(knowledge_base_ids !== undefined ? { knowledge_base_ids: toJson(knowledge_base_ids) } : {}),
    ...(handoffs !== undefined ? { handoffs: toJson(handoffs) } : {}),
    ...(redact !== undefined ? { redact: toJson(redact) } : {}),
    ...(end_call_phrases !== undefined ? { end_call_phrases: toJson(end_call_phrases) } : {}),
    ...(analysis_fields !== undefined ? { analysis_fields: toJson(analysis_fields) } : {}),
    ...(reminder_call !== undefined ? { reminder_call: reminder_call ? 1 : 0 } : {}),
    ...(reminder_call_inbound !== undefined ? { reminder_call_inbound: reminder_call_inbound ? 1 : 0 } : {}),
    ...(metadata !== undefined ? { metadata: toJson(metadata) } : {}),
    ...(transfer_enabled !== undefined ? { transfer_enabled: transfer_enabled ? 1 : 0 } : {}),
  };
}

/** LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The list and count queries, compiled once per shape (which filters are set, the order, a
 * cursor), and the read by id every GET of one runs.
 */
const SHAPES = new QueryShapes();

/** Agents; soft-deleted ones are invisible to every method but `findAnyById`. */
export class AgentsRepository {
  constructor(private readonly db: Db) {}

  async insert(record: AgentRecord, db: Db = this.db): Promise<void> {
    await db.insertInto("agents").values(toRow(record) as AgentTable).execute();
  }

  /** A live (not deleted) agent, whatever its account: callers check ownership. */
  async findById(id: string): Promise<AgentRecord | undefined> {
    if (!id) return undefined; // a shape leaves an empty value out
    const [row] = await SHAPES.rows(this.db, "agents:by-id", { id }, (v) => this.db.selectFrom("agents").selectAll().where("id", "=", v.id).where("deleted_at", "is", null));
    return row && toRecord(row);
  }

  /** An agent, deleted or not (the agent of an old call). */
  async findAnyById(id: string, db: Db = this.db): Promise<AgentRecord | undefined> {
    const row = await db.selectFrom("agents").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  async countLive(accountId: string, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom("agents")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", accountId)
      .where("deleted_at", "is", null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The list's filters as values: the search as its LIKE pattern. */
  private static listValues(accountId: string, filters: AgentFilters) {
    return { accountId, status: filters.status, searchPattern: filters.search ? containsPattern(filters.search) : undefined };
  }

  private filtered(v: ReturnType<typeof AgentsRepository.listValues>) {
    let q = this.db.selectFrom("agents").where("account_id", "=", v.accountId).where("deleted_at", "is", null);
    if (v.status) q = q.where("status", "=", v.status);
    // SQLite's LIKE ignores case; PostgreSQL's ILIKE is the one that does.
    if (v.searchPattern) q = q.where(sql<boolean>`name ${sql.raw(isPostgres(this.db) ? "ILIKE" : "LIKE")} ${v.searchPattern} ESCAPE '\\'`);
    return q;
  }

  /** A page of the list, each agent as its list item (prompts and settings are read one agent at a time). */
  page(accountId: string, filters: AgentFilters, page: PageRequest): Promise<Page<JsonListRow>> {
    const values = AgentsRepository.listValues(accountId, filters);
    return shapedPage(this.db, SHAPES, "agents", values, page, (v) => this.filtered(v).select(jsonListSelection(this.db, "agents", AGENT_LIST_ITEM)));
  }

  async count(accountId: string, filters: AgentFilters): Promise<number> {
    const values = AgentsRepository.listValues(accountId, filters);
    const [row] = await SHAPES.rows(this.db, "agents:count", values, (v) => this.filtered(v).select((eb) => eb.fn.countAll<number>().as("n")));
    return Number(row!.n);
  }

  async update(id: string, patch: Partial<AgentRecord>, db: Db = this.db): Promise<void> {
    await db.updateTable("agents").set(toRow(patch)).where("id", "=", id).execute();
  }

  async softDelete(id: string, at: string, db: Db = this.db): Promise<void> {
    await db.updateTable("agents").set({ deleted_at: at, status: "inactive", updated_at: at }).where("id", "=", id).execute();
  }
}
