import { ApiError } from "../core/api-error.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import { DeliveriesRepository, type DeliveryAttemptRecord, type DeliveryFilters, type DeliveryRecord } from "../db/repositories/deliveries.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { TEST_EVENT, type Outbox } from "./outbox.js";
import type { WebhookDeliveryWorker } from "./webhook-delivery.js";
import type { WebhooksService } from "./webhooks.js";

/** A delivery with its log of attempts, oldest first. */
export interface DeliveryWithAttempts extends DeliveryRecord {
  attempts: DeliveryAttemptRecord[];
}

const NOT_FOUND = { code: "delivery_not_found", message: "No delivery with this id for this webhook" };

/**
 * What an account sees and does about its webhooks' deliveries: the log, a redelivery, a
 * test event. Sending is the worker's (these two send at once, through it).
 */
export class WebhookDeliveriesService {
  private readonly deliveries: DeliveriesRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { webhooks: WebhooksService; outbox: Outbox; worker: WebhookDeliveryWorker; cursors: CursorCodec },
  ) {
    this.deliveries = new DeliveriesRepository(db);
  }

  async list(accountId: string, webhookId: string, filters: DeliveryFilters, query: ListQuery) {
    await this.deps.webhooks.get(accountId, webhookId);
    const page = await listPage({
      codec: this.deps.cursors,
      list: `deliveries:${webhookId}`,
      filters: { ...filters },
      query,
      fetch: (p) => this.deliveries.page(webhookId, filters, p),
      count: () => this.deliveries.count(webhookId, filters),
      present: (row: DeliveryRecord) => row,
    });
    const attempts = await this.deliveries.attemptsOf(page.data.map((d) => d.id));
    return { ...page, data: page.data.map((d) => ({ ...d, attempts: attempts.get(d.id) ?? [] })) };
  }

  async get(accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryWithAttempts> {
    await this.deps.webhooks.get(accountId, webhookId);
    return this.withAttempts(await this.find(webhookId, deliveryId));
  }

  /**
   * One more attempt of a finished delivery, now: same id and body, a fresh signature
   * timestamp. A delivery still waiting or being sent is refused (409 `delivery_in_progress`);
   * so is one whose receiver's host or account has no place for it (429, see attemptNow).
   */
  async redeliver(accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryWithAttempts> {
    const webhook = await this.deps.webhooks.get(accountId, webhookId);
    await this.find(webhookId, deliveryId);
    const { delivery } = await this.deps.worker.attemptNow(accountId, webhook.url, async () => {
      const claimed = await this.deliveries.claimFinished(deliveryId, Date.now() + this.deps.worker.leaseMs, nowIso());
      if (!claimed) throw new ApiError(409, "delivery_in_progress", "This delivery is still waiting for an attempt or being sent; redeliver it once it is delivered or failed");
      return claimed;
    });
    return this.withAttempts(delivery);
  }

  /**
   * Sends the webhook a `webhook.test` event now, whatever it subscribed to, and answers the
   * attempt's outcome. Refused (429) before the event is stored when its receiver's host or
   * account has no place for it (see attemptNow).
   */
  async sendTest(accountId: string, webhookId: string): Promise<DeliveryWithAttempts> {
    const webhook = await this.deps.webhooks.get(accountId, webhookId);
    const { delivery } = await this.deps.worker.attemptNow(accountId, webhook.url, async () => {
      const [event] = await this.deps.outbox.append(
        [
          {
            accountId,
            name: TEST_EVENT,
            data: { webhook_id: webhook.id, message: "A test event from Parley: your endpoint is receiving deliveries." },
            onlyWebhook: webhook,
            claimedUntil: Date.now() + this.deps.worker.leaseMs,
          },
        ],
        this.db,
      );
      const [claimed] = await this.deliveries.forEvent(event!.id);
      return claimed!;
    });
    return this.withAttempts(delivery);
  }

  private async find(webhookId: string, deliveryId: string): Promise<DeliveryRecord> {
    const delivery = await this.deliveries.findById(deliveryId);
    if (!delivery || delivery.webhook_id !== webhookId) throw new ApiError(404, NOT_FOUND.code, NOT_FOUND.message);
    return delivery;
  }

  private async withAttempts(delivery: DeliveryRecord): Promise<DeliveryWithAttempts> {
    return { ...delivery, attempts: (await this.deliveries.attemptsOf([delivery.id])).get(delivery.id) ?? [] };
  }
}
