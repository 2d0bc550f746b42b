import { sql } from "kysely";
import type { AnalysisField, EndpointingMode } from "../../../engine/index.js";
import type { Db } from "../database.js";
import type { AgentTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

export const AGENT_STATUSES = ["active", "inactive"] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export interface AgentRecord
  extends Omit<AgentTable, "end_call_phrases" | "metadata" | "transfer_enabled" | "status" | "analysis_fields" | "reminder_call" | "endpointing_mode"> {
  reminder_call: boolean;
  endpointing_mode: EndpointingMode;
  end_call_phrases: string[];
  analysis_fields: AnalysisField[];
  metadata: Record<string, unknown>;
  transfer_enabled: boolean;
  status: AgentStatus;
}

/** What an agent list shows of each agent (GET /v1/agents). */
export const AGENT_LIST_COLUMNS = ["id", "name", "voice_id", "language", "model", "status", "created_at", "updated_at"] as const;
export type AgentListRow = Pick<AgentRecord, (typeof AGENT_LIST_COLUMNS)[number]>;

export interface AgentFilters {
  status?: AgentStatus | undefined;
  search?: string | undefined;
}

function toRecord(row: AgentTable): AgentRecord {
  return {
    ...row,
    end_call_phrases: parseJson<string[]>(row.end_call_phrases) ?? [],
    analysis_fields: parseJson<AnalysisField[]>(row.analysis_fields) ?? [],
    reminder_call: row.reminder_call === 1,
    metadata: parseJson<Record<string, unknown>>(row.metadata) ?? {},
    transfer_enabled: row.transfer_enabled === 1,
    status: row.status as AgentStatus,
    endpointing_mode: row.endpointing_mode as EndpointingMode,
  };
}

function toRow(record: Partial<AgentRecord>): Partial<AgentTable> {
  const { end_call_phrases, metadata, transfer_enabled, analysis_fields, reminder_call, ...rest } = record;
  return {
    ...rest,
    ...(end_call_phrases !== undefined ? { end_call_phrases: toJson(end_call_phrases) } : {}),
    ...(analysis_fields !== undefined ? { analysis_fields: toJson(analysis_fields) } : {}),
    ...(reminder_call !== undefined ? { reminder_call: reminder_call ? 1 : 0 } : {}),
    ...(metadata !== undefined ? { metadata: toJson(metadata) } : {}),
    ...(transfer_enabled !== undefined ? { transfer_enabled: transfer_enabled ? 1 : 0 } : {}),
  };
}

/** LIKE pattern matching `text` anywhere, with LIKE's wildcards escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Agents; soft-deleted ones are invisible to every method but `findAnyById`. */
export class AgentsRepository {
  constructor(private readonly db: Db) {}

  async insert(record: AgentRecord, db: Db = this.db): Promise<void> {
    await db.insertInto("agents").values(toRow(record) as AgentTable).execute();
  }

  /** A live (not deleted) agent, whatever its account: callers check ownership. */
  async findById(id: string): Promise<AgentRecord | undefined> {
    const row = await this.db.selectFrom("agents").selectAll().where("id", "=", id).where("deleted_at", "is", null).executeTakeFirst();
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

  private filtered(accountId: string, filters: AgentFilters) {
    let q = this.db.selectFrom("agents").where("account_id", "=", accountId).where("deleted_at", "is", null);
    if (filters.status) q = q.where("status", "=", filters.status);
    if (filters.search) q = q.where(sql<boolean>`name LIKE ${containsPattern(filters.search)} ESCAPE '\\'`);
    return q;
  }

  /** A page of the list: only the columns it shows (prompts and settings are read one agent at a time). */
  async page(accountId: string, filters: AgentFilters, page: PageRequest): Promise<Page<AgentListRow>> {
    const result = await fetchPage(this.filtered(accountId, filters).select(AGENT_LIST_COLUMNS), "agents", page);
    return { rows: result.rows.map((row) => ({ ...row, status: row.status as AgentStatus })), hasMore: result.hasMore };
  }

  async count(accountId: string, filters: AgentFilters): Promise<number> {
    const row = await this.filtered(accountId, filters).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async update(id: string, patch: Partial<AgentRecord>, db: Db = this.db): Promise<void> {
    await db.updateTable("agents").set(toRow(patch)).where("id", "=", id).execute();
  }

  async softDelete(id: string, at: string, db: Db = this.db): Promise<void> {
    await db.updateTable("agents").set({ deleted_at: at, status: "inactive", updated_at: at }).where("id", "=", id).execute();
  }
}
