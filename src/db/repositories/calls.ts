import { beatingNodes } from "./beating-nodes.js";
import { sql } from "kysely";
import type { CallAction, CallAnalysis, CallLatency, CallOutcome } from "../../../engine/index.js";
import type { Db } from "../database.js";
import type { CallTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";
import { jsonListSelection, keysetOrdered, shapedPage, type JsonListRow, type Page, type PageRequest } from "./keyset.js";
import { jsonField, type JsonFields } from "../json-object.js";
import { QueryShapes } from "../query-shapes.js";
import { literalLimit } from "../literal-limit.js";
import { isPostgres } from "../dialect.js";

export const CALL_STATUSES = ["queued", "ringing", "in_progress", "completed", "transferred", "failed", "no_answer", "busy"] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** Statuses in which a call still holds its agent (`agent_in_use`). */
export const ACTIVE_CALL_STATUSES = ["queued", "ringing", "in_progress"] as const satisfies readonly CallStatus[];
/** Statuses that count against the concurrent-call limit. */
export const LIVE_CALL_STATUSES = ["ringing", "in_progress"] as const satisfies readonly CallStatus[];
export const ENDED_CALL_STATUSES = ["completed", "transferred", "failed", "no_answer", "busy"] as const satisfies readonly CallStatus[];

/**
 * A call still holds content (what CallContentRemoval removes). Word for word the condition of
 * the partial index `calls_with_content` (migration 012): SQLite uses that index only for a
 * query that states it.
 */
const CALL_CONTENT = sql<boolean>`(transcript IS NOT NULL OR recording_path IS NOT NULL OR analysis IS NOT NULL OR actions IS NOT NULL OR context <> '{}')`;

export const CALL_DIRECTIONS = ["outbound", "inbound", "web"] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

export interface TranscriptSegment {
  role: "agent" | "user";
  content: string;
  timestamp: number;
}

type JsonColumns = "metadata" | "context" | "record" | "transcript" | "analysis" | "status" | "direction" | "outcome" | "actions" | "latency" | "analysis_pending";

export interface CallRecord extends Omit<CallTable, JsonColumns> {
  status: CallStatus;
  direction: CallDirection;
  metadata: Record<string, unknown>;
  context: Record<string, unknown>;
  record: boolean;
  transcript: TranscriptSegment[] | null;
  /** Null for calls that never connected, and for calls stored before analyses existed (migration 008). */
  analysis: CallAnalysis | null;
  outcome: CallOutcome | null;
  actions: CallAction[] | null;
  latency: CallLatency | null;
  analysis_pending: boolean;
}

/** The fields a new call starts without: those its end fills in, and the appointment a reminder call is about. */
export function unfinishedCallFields(): Pick<
  CallRecord,
  | "duration"
  | "transcript"
  | "recording_path"
  | "analysis"
  | "billed_credits"
  | "ended_at"
  | "outcome"
  | "actions"
  | "end_reason"
  | "transfer_number"
  | "failure_reason"
  | "latency"
  | "analysis_pending"
  | "appointment_id"
  | "node_id"
> {
  return {
    duration: null,
    transcript: null,
    recording_path: null,
    analysis: null,
    billed_credits: null,
    ended_at: null,
    outcome: null,
    actions: null,
    end_reason: null,
    transfer_number: null,
    failure_reason: null,
    latency: null,
    analysis_pending: false,
    appointment_id: null,
    node_id: null,
  };
}

export function callFromRow(row: CallTable): CallRecord {
  return {
    ...row,
    status: row.status as CallStatus,
    direction: row.direction as CallDirection,
    metadata: parseJson<Record<string, unknown>>(row.metadata) ?? {},
    context: parseJson<Record<string, unknown>>(row.context) ?? {},
    record: row.record === 1,
    transcript: parseJson<TranscriptSegment[]>(row.transcript),
    analysis: parseJson<CallAnalysis>(row.analysis),
    outcome: row.outcome as CallOutcome | null,
    actions: parseJson<CallAction[]>(row.actions),
    latency: parseJson<CallLatency>(row.latency),
    analysis_pending: row.analysis_pending === 1,
  };
}

/**
 * An item of the call list (GET /v1/calls): not the call's transcript, analysis or other large parts.
 * Its JSON is kept in the list's index (migration 014): a change here needs a migration that
 * indexes the new expression (the plan test fails until then).
 */
const CALL_LIST_ITEM: JsonFields = {
  id: jsonField.value("id"),
  status: jsonField.value("status"),
  direction: jsonField.value("direction"),
  phone_number: jsonField.value("phone_number"),
  from_number: jsonField.value("from_number"),
  agent_id: jsonField.value("agent_id"),
  duration: jsonField.value("duration"),
  metadata: jsonField.json("metadata", "{}"),
  created_at: jsonField.value("created_at"),
  ended_at: jsonField.value("ended_at"),
};

function toRow(record: Partial<CallRecord>): Partial<CallTable> {
  const { metadata, context, record: recorded, transcript, analysis, actions, latency, analysis_pending, ...rest } = record;
  const json = (value: unknown) => (value === null ? null : toJson(value));
  return {
    ...rest,
    ...(metadata !== undefined ? { metadata: toJson(metadata) } : {}),
    ...(context !== undefined ? { context: toJson(context) } : {}),
    ...(recorded !== undefined ? { record: recorded ? 1 : 0 } : {}),
    ...(transcript !== undefined ? { transcript: json(transcript) } : {}),
    ...(analysis !== undefined ? { analysis: json(analysis) } : {}),
    ...(actions !== undefined ? { actions: json(actions) } : {}),
    ...(latency !== undefined ? { latency: json(latency) } : {}),
    ...(analysis_pending !== undefined ? { analysis_pending: analysis_pending ? 1 : 0 } : {}),
  };
}

/** Filters of the call list; `phoneNumber` is the far end's number (the `phone_number` column). */
export interface CallFilters {
  status?: CallStatus | undefined;
  outcome?: CallOutcome | undefined;
  agentId?: string | undefined;
  phoneNumber?: string | undefined;
  direction?: CallDirection | undefined;
  /** Created at or after this instant (inclusive). */
  createdFrom?: string | undefined;
  /** Created before this instant (exclusive). */
  createdBefore?: string | undefined;
}

/** Aggregates over a set of calls, as agents' and numbers' `include=stats` report them. */
export interface CallStats {
  total_calls: number;
  /** Billed minutes: each connected call's started minutes. */
  total_minutes: number;
  connected_calls: number;
  total_duration_seconds: number;
  ended_calls: number;
  successful_calls: number;
}

const billedMinutes = sql<number>`CASE WHEN duration > 0 THEN (duration + 59) / 60 ELSE 0 END`;

/** Which calls: an agent's, or a number's (made from it, or received on it). */
export interface CallScope {
  agentId?: string;
  phoneNumber?: string;
}

/**
 * The list and count queries, compiled once per shape (which filters are set, the order, a
 * cursor), and the read by id every GET of one runs.
 */
const SHAPES = new QueryShapes();

export class CallsRepository {
  constructor(private readonly db: Db) {}

  private matching(accountId: string, where: CallScope) {
    let q = this.db.selectFrom("calls").where("account_id", "=", accountId);
    if (where.agentId) q = q.where("agent_id", "=", where.agentId);
    const n = where.phoneNumber;
    if (n) {
      q = q.where((eb) =>
        eb.or([
          eb.and([eb("direction", "=", "outbound"), eb("from_number", "=", n)]),
          eb.and([eb("direction", "=", "inbound"), eb("phone_number", "=", n)]),
        ]),
      );
    }
    return q;
  }

  async insert(record: CallRecord, db: Db = this.db): Promise<void> {
    await db.insertInto("calls").values(toRow(record) as CallTable).execute();
  }

  /** A call, whatever its account: callers check ownership. */
  async findById(id: string, db: Db = this.db): Promise<CallRecord | undefined> {
    if (!id) return undefined; // a shape leaves an empty value out
    const [row] = await SHAPES.rows(db, "calls:by-id", { id }, (v) => db.selectFrom("calls").selectAll().where("id", "=", v.id));
    return row && callFromRow(row);
  }

  /**
   * The live (`ringing`, `in_progress`) calls whose node is lost: none recorded (calls from
   * before nodes existed), `ownId` when `includeOwn` (at start-up nothing runs here yet: such
   * calls are left by this node's previous process), a node that stopped, beat last before
   * `staleBefore` (ms), or has no row.
   */
  async liveOfLostNodes(ownId: string, includeOwn: boolean, staleBefore: number, db: Db = this.db): Promise<CallRecord[]> {
    const rows = await db
      .selectFrom("calls")
      .selectAll()
      .where("status", "in", ["ringing", "in_progress"])
      .where((eb) =>
        eb.or([
          eb("node_id", "is", null),
          ...(includeOwn ? [eb("node_id", "=", ownId)] : []),
          eb.and([
            eb("node_id", "<>", ownId),
            eb.not(eb.exists(beatingNodes(db, staleBefore).where("nodes.id", "=", sql.ref<string>("calls.node_id")))),
          ]),
        ]),
      )
      .execute();
    return rows.map(callFromRow);
  }

  /**
   * Inside a transaction about to change call `id`: on PostgreSQL its row is locked until the
   * transaction ends, so a second node changing it waits and then reads the change (on SQLite
   * the one writer already serialises them).
   */
  async lockForChange(id: string, trx: Db): Promise<void> {
    if (isPostgres(trx)) await trx.selectFrom("calls").select("id").where("id", "=", id).forUpdate().execute();
  }

  /**
   * Up to `limit` of the account's ended calls that still hold content (see CALL_CONTENT) and
   * ended before `before`, created after `after` (a keyset: `created_at`, `id`), oldest first;
   * calls whose analysis is still being written are left for later. Reads the index of calls
   * with content (migration 012): calls already emptied are not read again.
   */
  async endedWithContent(accountId: string, before: string, after: { created_at: string; id: string } | null, limit: number): Promise<Array<{ id: string; created_at: string }>> {
    const q = this.db
      .selectFrom("calls")
      .select(["id", "created_at"])
      .where("account_id", "=", accountId)
      .where(CALL_CONTENT)
      .where("created_at", "<", before)
      .where(sql<boolean>`coalesce(ended_at, created_at) < ${before}`)
      .where("status", "in", [...ENDED_CALL_STATUSES])
      .where("analysis_pending", "=", 0);
    return keysetOrdered(q, "calls", "asc", after === null ? undefined : { createdAt: after.created_at, id: after.id }, limit).execute();
  }

  /**
   * Marks live calls as still running (`updated_at`) with their transcript so far (kept as it
   * is while empty), so a crash leaves a known last moment and what had been said by then.
   */
  async touch(calls: ReadonlyArray<{ id: string; transcript: TranscriptSegment[] }>, at: string, db: Db = this.db): Promise<void> {
    if (calls.length === 0) return;
    await db.transaction().execute(async (trx) => {
      for (const call of calls) {
        const patch = toRow({ updated_at: at, ...(call.transcript.length > 0 ? { transcript: call.transcript } : {}) });
        await trx.updateTable("calls").set(patch).where("id", "=", call.id).where("status", "=", "in_progress").execute();
      }
    });
  }

  async update(id: string, patch: Partial<CallRecord>, db: Db = this.db): Promise<void> {
    await db.updateTable("calls").set(toRow(patch)).where("id", "=", id).execute();
  }

  /**
   * How many of the account's calls are in `statuses` (the queued-call limit counts `queued`,
   * the concurrent-call limit the LIVE_CALL_STATUSES).
   */
  async countInStatus(accountId: string, statuses: CallStatus | readonly CallStatus[], db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom("calls")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", accountId)
      .where("status", "in", typeof statuses === "string" ? [statuses] : statuses)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A campaign's calls in `statuses`. */
  async countOfCampaign(campaignId: string, statuses: readonly CallStatus[], db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom("calls")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("campaign_id", "=", campaignId)
      .where("status", "in", statuses)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The calls made for the given campaign contacts, oldest first. */
  async ofContacts(contactIds: readonly string[]): Promise<CallRecord[]> {
    if (contactIds.length === 0) return [];
    const rows = await this.db.selectFrom("calls").selectAll().where("contact_id", "in", contactIds).orderBy("created_at").orderBy("id").execute();
    return rows.map(callFromRow);
  }

  private filtered(accountId: string, filters: CallFilters) {
    let q = this.db.selectFrom("calls").where("account_id", "=", accountId);
    if (filters.status) q = q.where("status", "=", filters.status);
    if (filters.outcome) q = q.where("outcome", "=", filters.outcome);
    if (filters.agentId) q = q.where("agent_id", "=", filters.agentId);
    if (filters.phoneNumber) q = q.where("phone_number", "=", filters.phoneNumber);
    if (filters.direction) q = q.where("direction", "=", filters.direction);
    if (filters.createdFrom) q = q.where("created_at", ">=", filters.createdFrom);
    if (filters.createdBefore) q = q.where("created_at", "<", filters.createdBefore);
    return q;
  }

  /** A page of the list, each call as its list item: reading and parsing a transcript per row would cost more than the rest. */
  page(accountId: string, filters: CallFilters, page: PageRequest): Promise<Page<JsonListRow>> {
    // Past a cursor, the date bound on the cursor's side is met already (the cursor's call met
    // it): left out, it no longer competes with the cursor as the index range SQLite reads.
    const bounds = page.after === undefined ? filters : { ...filters, ...(page.order === "desc" ? { createdBefore: undefined } : { createdFrom: undefined }) };
    return shapedPage(this.db, SHAPES, "calls", { accountId, ...bounds }, page, ({ accountId: a, ...f }) => this.filtered(a, f).select(jsonListSelection(this.db, "calls", CALL_LIST_ITEM)));
  }

  /**
   * The calls `filters` match. With no filter but status and direction, the sum of the
   * account's kept counts (migration 015): a few rows, however many calls.
   */
  async count(accountId: string, filters: CallFilters): Promise<number> {
    const { status, direction, ...others } = filters;
    if (Object.values(others).every((value) => !value)) {
      const [kept] = await SHAPES.rows(this.db, "calls:kept-count", { accountId, status, direction }, (v) => {
        let q = this.db.selectFrom("call_counts").select(sql<number>`COALESCE(SUM(n), 0)`.as("n")).where("account_id", "=", v.accountId);
        if (v.status) q = q.where("status", "=", v.status);
        if (v.direction) q = q.where("direction", "=", v.direction);
        return q;
      });
      return Number(kept!.n);
    }
    const [row] = await SHAPES.rows(this.db, "calls:count", { accountId, ...filters }, ({ accountId: a, ...f }) => this.filtered(a, f).select((eb) => eb.fn.countAll<number>().as("n")));
    return Number(row!.n);
  }

  async countActiveForAgent(agentId: string, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom("calls")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("agent_id", "=", agentId)
      .where("status", "in", ACTIVE_CALL_STATUSES)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Stats over the account's calls matching `where` (an agent, or a number), optionally since a time. */
  async stats(accountId: string, where: CallScope, since?: string): Promise<CallStats> {
    let q = this.matching(accountId, where);
    if (since) q = q.where("created_at", ">=", since);
    const row = await q
      .select((eb) => [
        eb.fn.countAll<number>().as("total_calls"),
        sql<number>`COALESCE(SUM(${billedMinutes}), 0)`.as("total_minutes"),
        sql<number>`COALESCE(SUM(CASE WHEN duration > 0 THEN 1 ELSE 0 END), 0)`.as("connected_calls"),
        sql<number>`COALESCE(SUM(CASE WHEN duration > 0 THEN duration ELSE 0 END), 0)`.as("total_duration_seconds"),
        sql<number>`COALESCE(SUM(CASE WHEN status IN ('completed','transferred','failed','no_answer','busy') THEN 1 ELSE 0 END), 0)`.as("ended_calls"),
        sql<number>`COALESCE(SUM(CASE WHEN status IN ('completed','transferred') THEN 1 ELSE 0 END), 0)`.as("successful_calls"),
      ])
      .executeTakeFirstOrThrow();
    return {
      total_calls: Number(row.total_calls),
      total_minutes: Number(row.total_minutes),
      connected_calls: Number(row.connected_calls),
      total_duration_seconds: Number(row.total_duration_seconds),
      ended_calls: Number(row.ended_calls),
      successful_calls: Number(row.successful_calls),
    };
  }

  /** How many of the agent's calls have each outcome (calls without one are not counted). */
  async outcomeCounts(accountId: string, agentId: string): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom("calls")
      .select((eb) => ["outcome", eb.fn.countAll<number>().as("n")])
      .where("account_id", "=", accountId)
      .where("agent_id", "=", agentId)
      .where("outcome", "is not", null)
      .groupBy("outcome")
      .execute();
    return new Map(rows.map((r) => [r.outcome!, Number(r.n)]));
  }

  /** The newest calls matching `where`, newest first. */
  async recent(accountId: string, where: CallScope, limit: number): Promise<CallRecord[]> {
    const rows = await this.matching(accountId, where)
      .selectAll()
      .orderBy("created_at", "desc").orderBy("id", "desc").limit(literalLimit(limit)).execute();
    return rows.map(callFromRow);
  }
}
