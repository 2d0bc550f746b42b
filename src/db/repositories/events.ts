import { sql } from "kysely";
import type { Db } from "../database.js";
import type { EventTable } from "../schema.js";
import { parseJson, toJson } from "./json-column.js";

export interface EventRecord extends Omit<EventTable, "data"> {
  data: Record<string, unknown>;
}

/** The event outbox: appended inside the transaction of the change an event reports. */
export class EventsRepository {
  constructor(private readonly db: Db) {}

  async append(events: readonly EventRecord[], db: Db = this.db): Promise<void> {
    if (events.length === 0) return;
    await db
      .insertInto("events")
      .values(events.map((e) => ({ ...e, data: toJson(e.data) })))
      .execute();
  }

  /** A call's events in the order they were stored. */
  async forCall(callId: string): Promise<EventRecord[]> {
    const rows = await this.db.selectFrom("events").selectAll().where("call_id", "=", callId).orderBy(sql`rowid`).execute();
    return rows.map((row) => ({ ...row, data: parseJson<Record<string, unknown>>(row.data) ?? {} }));
  }
}
