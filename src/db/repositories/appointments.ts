import type { Db } from "../database.js";
import type { AppointmentTable } from "../schema.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

export const APPOINTMENT_STATUSES = ["scheduled", "cancelled", "completed"] as const;
export type AppointmentStatus = (typeof APPOINTMENT_STATUSES)[number];

export interface AppointmentRecord extends Omit<AppointmentTable, "status"> {
  status: AppointmentStatus;
}

export interface AppointmentFilters {
  status?: AppointmentStatus | undefined;
  callId?: string | undefined;
  /** Appointment dates from this day (YYYY-MM-DD, inclusive). */
  fromDate?: string | undefined;
  /** Appointment dates up to this day (YYYY-MM-DD, inclusive). */
  toDate?: string | undefined;
}

function toRecord(row: AppointmentTable): AppointmentRecord {
  return { ...row, status: row.status as AppointmentStatus };
}

export class AppointmentsRepository {
  constructor(private readonly db: Db) {}

  async insert(record: AppointmentRecord, db: Db = this.db): Promise<void> {
    await db.insertInto("appointments").values(record).execute();
  }

  /** An appointment whatever its account: callers check ownership. */
  async findById(id: string): Promise<AppointmentRecord | undefined> {
    const row = await this.db.selectFrom("appointments").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  private filtered(accountId: string, filters: AppointmentFilters) {
    let q = this.db.selectFrom("appointments").where("account_id", "=", accountId);
    if (filters.status) q = q.where("status", "=", filters.status);
    if (filters.callId) q = q.where("call_id", "=", filters.callId);
    // YYYY-MM-DD text compares in calendar order.
    if (filters.fromDate) q = q.where("date", ">=", filters.fromDate);
    if (filters.toDate) q = q.where("date", "<=", filters.toDate);
    return q;
  }

  async page(accountId: string, filters: AppointmentFilters, page: PageRequest): Promise<Page<AppointmentRecord>> {
    const result = await fetchPage(this.filtered(accountId, filters).selectAll(), "appointments", page);
    return { rows: result.rows.map(toRecord), hasMore: result.hasMore };
  }

  async count(accountId: string, filters: AppointmentFilters): Promise<number> {
    const row = await this.filtered(accountId, filters).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The appointments booked on call `callId`, oldest first. */
  async ofCall(callId: string, db: Db = this.db): Promise<AppointmentRecord[]> {
    const rows = await db.selectFrom("appointments").selectAll().where("call_id", "=", callId).orderBy("created_at").orderBy("id").execute();
    return rows.map(toRecord);
  }

  /** The agent's scheduled appointments dated `fromDate` to `toDate` (inclusive), but `except` (one being moved). */
  async scheduledOfAgent(
    agentId: string,
    fromDate: string,
    toDate: string,
    db: Db = this.db,
    except?: string,
  ): Promise<Array<Pick<AppointmentRecord, "date" | "time" | "duration_minutes">>> {
    let q = db
      .selectFrom("appointments")
      .select(["date", "time", "duration_minutes"])
      .where("agent_id", "=", agentId)
      .where("status", "=", "scheduled")
      .where("date", ">=", fromDate)
      .where("date", "<=", toDate);
    if (except) q = q.where("id", "<>", except);
    return q.execute();
  }

  /** Applies `patch` unless the appointment is cancelled; says whether it applied. */
  async updateUnlessCancelled(id: string, patch: Partial<AppointmentRecord>, db: Db = this.db): Promise<boolean> {
    const result = await db.updateTable("appointments").set(patch).where("id", "=", id).where("status", "<>", "cancelled").executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
