import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import { DeliveriesRepository, type DeliveryRecord } from "../db/repositories/deliveries.js";
import { EventsRepository, type EventRecord } from "../db/repositories/events.js";
import { WebhooksRepository, type WebhookRecord } from "../db/repositories/webhooks.js";
import { ALL_EVENTS, EVENT_ALIASES, type EventName } from "./event-names.js";

/** Sent only by `POST /v1/webhooks/{id}/test`, to that webhook: no subscription names it. */
export const TEST_EVENT = "webhook.test";

export type OutboxEventName = EventName | typeof TEST_EVENT;

export interface NewEvent {
  accountId: string;
  name: OutboxEventName;
  data: Record<string, unknown>;
  /** The call the event is about. */
  callId?: string | null;
  /**
   * The call's own `webhook_url`: its call events go there instead of to the account's
   * webhooks (the reference's per-call override).
   */
  callWebhookUrl?: string | null;
  /** Only this webhook receives it, whatever it subscribed to (the test event). */
  onlyWebhook?: WebhookRecord;
  /**
   * The caller sends it itself, at once (the test event): its delivery is written claimed
   * (`sending`, first attempt) until this time (ms since the epoch), so no worker takes it.
   */
  claimedUntil?: number;
}

/** The name `webhook` receives `event` under, or undefined when it did not subscribe to it. */
export function subscribedName(webhook: Pick<WebhookRecord, "events">, event: OutboxEventName): string | undefined {
  if (webhook.events.includes(ALL_EVENTS) || webhook.events.includes(event)) return event;
  return webhook.events.find((name) => EVENT_ALIASES[name as EventName] === event);
}

/**
 * The transactional outbox: an event and its deliveries (one per receiver) are written in
 * the transaction of the change they report, so each exists exactly when the change does,
 * and a crash right after the commit loses no delivery. The delivery worker is woken after
 * each append (on SQLite its reads wait for the transaction to end; on PostgreSQL the commit's
 * notice wakes it again).
 */
export class Outbox {
  private readonly events: EventsRepository;
  private readonly deliveries: DeliveriesRepository;
  private readonly webhooks: WebhooksRepository;
  private readonly listeners: Array<() => void> = [];

  constructor(db: Db) {
    this.events = new EventsRepository(db);
    this.deliveries = new DeliveriesRepository(db);
    this.webhooks = new WebhooksRepository(db);
  }

  /** Called after every append (the delivery worker's wake-up). */
  onAppend(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Stores `events` and their deliveries with `db` (the change's transaction). */
  async append(events: readonly NewEvent[], db: Db): Promise<EventRecord[]> {
    if (events.length === 0) return [];
    const at = nowIso();
    const stored = await this.events.append(
      events.map((e) => ({ id: newId("event"), account_id: e.accountId, name: e.name, call_id: e.callId ?? null, data: e.data, created_at: at })),
      db,
    );
    const receiversOf = new Map<string, WebhookRecord[]>();
    const deliveries: DeliveryRecord[] = [];
    const due = Date.now();
    const delivery = (event: EventRecord, name: string, target: { webhookId: string } | { url: string; callId: string }, claimedUntil?: number): DeliveryRecord => ({
      id: newId("delivery"),
      account_id: event.account_id,
      event_id: event.id,
      webhook_id: "webhookId" in target ? target.webhookId : null,
      url: "url" in target ? target.url : null,
      receiver: "webhookId" in target ? target.webhookId : `call:${target.callId}`,
      event_name: name,
      ...(claimedUntil === undefined
        ? { status: "pending", attempt_count: 0, next_attempt_at: due, lease_until: null }
        : { status: "sending", attempt_count: 1, next_attempt_at: null, lease_until: claimedUntil }),
      created_at: at,
      updated_at: at,
      completed_at: null,
    });
    for (const [i, input] of events.entries()) {
      const event = stored[i]!;
      if (input.onlyWebhook) {
        deliveries.push(delivery(event, input.name, { webhookId: input.onlyWebhook.id }, input.claimedUntil));
      } else if (input.callWebhookUrl && input.callId && input.name.startsWith("call.")) {
        deliveries.push(delivery(event, input.name, { url: input.callWebhookUrl, callId: input.callId }));
      } else {
        let receivers = receiversOf.get(input.accountId);
        if (!receivers) receiversOf.set(input.accountId, (receivers = await this.webhooks.receiving(input.accountId, db)));
        for (const webhook of receivers) {
          const name = subscribedName(webhook, input.name);
          if (name) deliveries.push(delivery(event, name, { webhookId: webhook.id }));
        }
      }
    }
    await this.deliveries.insert(deliveries, db);
    if (deliveries.length > 0) for (const listener of this.listeners) listener();
    return stored;
  }
}
