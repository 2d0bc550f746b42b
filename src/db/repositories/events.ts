import type { Db } from "../database.js";
import { ADVISORY_LOCKS, holdAdvisoryLock } from "../advisory-locks.js";
import { isPostgres } from "../dialect.js";
import type { EventTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

export interface EventRecord extends Omit<EventTable, "data"> {
  data: Record<string, unknown>;
}

/** An event to store: its sequence number is given by the outbox as it is stored. */
export type NewEventRecord = Omit<EventRecord, "seq">;

export interface EventFilters {
  name?: string | undefined;
  callId?: string | undefined;
  /** Events stored at or after this instant (ISO 8601). */
  createdFrom?: string | undefined;
  /** Events stored before this instant (ISO 8601). */
  createdBefore?: string | undefined;
}

function toRecord(row: EventTable): EventRecord {
  return { ...row, data: parseJson<Record<string, unknown>>(row.data) ?? {} };
}

/** The event outbox: appended inside the transaction of the change an event reports. */
export class EventsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Stores `events` in order with the next sequence numbers. Run it inside the change's
   * transaction: writers are serialised there (SQLite's single writer; on PostgreSQL, a lock
   * held until the transaction commits), so numbers never repeat or go backwards, and a
   * receiver never sees a number after a higher one was committed.
   */
  async append(events: readonly NewEventRecord[], db: Db = this.db): Promise<EventRecord[]> {
    if (events.length === 0) return [];
    if (isPostgres(db) && !db.isTransaction) return db.transaction().execute((trx) => this.append(events, trx));
    await holdAdvisoryLock(db, ADVISORY_LOCKS.eventSequence);
    const last = await db.selectFrom("events").select((eb) => eb.fn.max("seq").as("seq")).executeTakeFirst();
    const first = Number(last?.seq ?? 0) + 1;
    const records = events.map((e, i) => ({ ...e, seq: first + i }));
    await db
      .insertInto("events")
      .values(records.map((e) => ({ ...e, data: toJson(e.data) })))
      .execute();
    return records;
  }

  async findById(id: string, db: Db = this.db): Promise<EventRecord | undefined> {
    const row = await db.selectFrom("events").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** Replaces the stored data of one event (a call's content removed on request). */
  async replaceData(id: string, data: Record<string, unknown>, db: Db = this.db): Promise<void> {
    await db.updateTable("events").set({ data: toJson(data) }).where("id", "=", id).execute();
  }

  /** A call's events in the order they were stored. */
  async forCall(callId: string, db: Db = this.db): Promise<EventRecord[]> {
    const rows = await db.selectFrom("events").selectAll().where("call_id", "=", callId).orderBy("seq").execute();
    return rows.map(toRecord);
  }

  private filtered(accountId: string, filters: EventFilters) {
    let q = this.db.selectFrom("events").where("account_id", "=", accountId);
    if (filters.name) q = q.where("name", "=", filters.name);
    if (filters.callId) q = q.where("call_id", "=", filters.callId);
    if (filters.createdFrom) q = q.where("created_at", ">=", filters.createdFrom);
    if (filters.createdBefore) q = q.where("created_at", "<", filters.createdBefore);
    return q;
  }

  async page(accountId: string, filters: EventFilters, page: PageRequest): Promise<Page<EventRecord>> {
    const result = await fetchPage(this.filtered(accountId, filters).selectAll(), "events", page);
    return { rows: result.rows.map(toRecord), hasMore: result.hasMore };
  }

  async count(accountId: string, filters: EventFilters): Promise<number> {
    const row = await this.filtered(accountId, filters).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
