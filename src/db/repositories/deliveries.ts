import type { Db } from "../database.js";
import type { DeliveryAttemptTable, DeliveryTable } from "../schema.js";
import { literalLimit } from "../literal-limit.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

/**
 * `pending` waits for its first attempt or a retry; `sending` is held by a worker (until its
 * lease ends); `delivered` got a 2xx; `failed` used up its retries; `skipped` was not sent
 * because its webhook was disabled or deleted first.
 */
export const DELIVERY_STATUSES = ["pending", "sending", "delivered", "failed", "skipped"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryRecord extends Omit<DeliveryTable, "status"> {
  status: DeliveryStatus;
}

export type DeliveryAttemptRecord = DeliveryAttemptTable;

export interface DeliveryFilters {
  status?: DeliveryStatus | undefined;
  eventName?: string | undefined;
  /** Deliveries of this call's events. */
  callId?: string | undefined;
}

/** A due delivery the worker may claim, with the URL it would go to now. */
export interface DueDelivery {
  id: string;
  accountId: string;
  receiver: string;
  targetUrl: string | null;
}

function toRecord(row: DeliveryTable): DeliveryRecord {
  return { ...row, status: row.status as DeliveryStatus };
}

export class DeliveriesRepository {
  constructor(private readonly db: Db) {}

  async insert(records: readonly DeliveryRecord[], db: Db = this.db): Promise<void> {
    if (records.length === 0) return;
    await db.insertInto("deliveries").values(records).execute();
  }

  async findById(id: string): Promise<DeliveryRecord | undefined> {
    const row = await this.db.selectFrom("deliveries").selectAll().where("id", "=", id).executeTakeFirst();
    return row && toRecord(row);
  }

  async forEvent(eventId: string): Promise<DeliveryRecord[]> {
    const rows = await this.db.selectFrom("deliveries").selectAll().where("event_id", "=", eventId).orderBy("id").execute();
    return rows.map(toRecord);
  }

  async update(id: string, patch: Partial<DeliveryRecord>): Promise<void> {
    await this.db.updateTable("deliveries").set(patch).where("id", "=", id).execute();
  }

  /**
   * Deliveries due at `now`, oldest due first: sending ones whose worker's claim ran out, then
   * pending ones, leaving out the receivers in `busy` (the worker cannot start more for them
   * now, so their backlog must not fill the window). Both walk an index in due order.
   */
  async due(now: number, busy: readonly string[], limit: number): Promise<DueDelivery[]> {
    const select = this.db
      .selectFrom("deliveries as d")
      .leftJoin("webhooks as w", "w.id", "d.webhook_id")
      .select(["d.id", "d.account_id", "d.receiver", (eb) => eb.fn.coalesce("d.url", "w.url").as("target_url")]);
    const unclaimed = await select.where("d.status", "=", "sending").where("d.lease_until", "<=", now).orderBy("d.lease_until").limit(literalLimit(limit)).execute();
    let pending = select.where("d.status", "=", "pending").where("d.next_attempt_at", "<=", now);
    if (busy.length > 0) pending = pending.where("d.receiver", "not in", busy);
    const rows = [...unclaimed, ...(await pending.orderBy("d.next_attempt_at").limit(literalLimit(limit)).execute())].slice(0, limit);
    return rows.map((r) => ({ id: r.id, accountId: r.account_id, receiver: r.receiver, targetUrl: r.target_url }));
  }

  /**
   * Claims the given deliveries that are still due, in one conditional update: a delivery
   * another worker claimed meanwhile is not returned. Each claimed one counts an attempt.
   */
  async claim(ids: readonly string[], now: number, leaseUntil: number, at: string): Promise<DeliveryRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .updateTable("deliveries")
      .set((eb) => ({ status: "sending", lease_until: leaseUntil, attempt_count: eb("attempt_count", "+", 1), updated_at: at }))
      .where("id", "in", ids)
      .where((eb) =>
        eb.or([
          eb.and([eb("status", "=", "pending"), eb("next_attempt_at", "<=", now)]),
          eb.and([eb("status", "=", "sending"), eb("lease_until", "<=", now)]),
        ]),
      )
      .returningAll()
      .execute();
    return rows.map(toRecord);
  }

  /**
   * Claims one finished delivery for a new attempt out of turn (redelivery): only a delivery
   * that is not waiting or being sent.
   */
  async claimFinished(id: string, leaseUntil: number, at: string): Promise<DeliveryRecord | undefined> {
    const row = await this.db
      .updateTable("deliveries")
      .set((eb) => ({ status: "sending", lease_until: leaseUntil, attempt_count: eb("attempt_count", "+", 1), updated_at: at }))
      .where("id", "=", id)
      .where("status", "in", ["delivered", "failed", "skipped"])
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** When the next delivery falls due (a retry, or a claim running out); undefined: none waits. */
  async nextDueAt(): Promise<number | undefined> {
    const [pending, sending] = await Promise.all([
      this.db.selectFrom("deliveries").select((eb) => eb.fn.min("next_attempt_at").as("at")).where("status", "=", "pending").executeTakeFirst(),
      this.db.selectFrom("deliveries").select((eb) => eb.fn.min("lease_until").as("at")).where("status", "=", "sending").executeTakeFirst(),
    ]);
    const times = [pending?.at, sending?.at].filter((t): t is number => t !== null && t !== undefined).map(Number);
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  /**
   * Writes an attempt's outcome and the delivery's next state together; says false when the
   * delivery is gone (its webhook was deleted during the attempt) and nothing was written.
   */
  async settle(attempt: DeliveryAttemptRecord, patch: Partial<DeliveryRecord>, db: Db): Promise<boolean> {
    const updated = await db.updateTable("deliveries").set(patch).where("id", "=", attempt.delivery_id).returning("id").executeTakeFirst();
    if (!updated) return false;
    await db.insertInto("delivery_attempts").values(attempt).execute();
    return true;
  }

  /** Marks a webhook's waiting deliveries `skipped` (it was disabled). */
  async skipPending(webhookId: string, at: string, db: Db = this.db): Promise<void> {
    await db
      .updateTable("deliveries")
      .set({ status: "skipped", next_attempt_at: null, lease_until: null, updated_at: at, completed_at: at })
      .where("webhook_id", "=", webhookId)
      .where("status", "=", "pending")
      .execute();
  }

  /** Removes a deleted webhook's deliveries and their log. */
  async deleteOfWebhook(webhookId: string, db: Db = this.db): Promise<void> {
    await db.deleteFrom("deliveries").where("webhook_id", "=", webhookId).execute();
  }

  private filtered(webhookId: string, filters: DeliveryFilters) {
    let q = this.db.selectFrom("deliveries").where("webhook_id", "=", webhookId);
    if (filters.status) q = q.where("status", "=", filters.status);
    if (filters.eventName) q = q.where("event_name", "=", filters.eventName);
    const callId = filters.callId;
    if (callId) q = q.where("event_id", "in", (eb) => eb.selectFrom("events").select("id").where("call_id", "=", callId));
    return q;
  }

  async page(webhookId: string, filters: DeliveryFilters, page: PageRequest): Promise<Page<DeliveryRecord>> {
    const result = await fetchPage(this.filtered(webhookId, filters).selectAll(), "deliveries", page);
    return { rows: result.rows.map(toRecord), hasMore: result.hasMore };
  }

  async count(webhookId: string, filters: DeliveryFilters): Promise<number> {
    const row = await this.filtered(webhookId, filters).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The attempts of these deliveries, in order, keyed by delivery. */
  async attemptsOf(ids: readonly string[]): Promise<Map<string, DeliveryAttemptRecord[]>> {
    const byDelivery = new Map<string, DeliveryAttemptRecord[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return byDelivery;
    const rows = await this.db.selectFrom("delivery_attempts").selectAll().where("delivery_id", "in", ids).orderBy("delivery_id").orderBy("number").execute();
    for (const row of rows) byDelivery.get(row.delivery_id)?.push(row);
    return byDelivery;
  }
}
