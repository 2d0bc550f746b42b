/**
 * Webhooks: `POST/GET/PATCH/DELETE /v1/webhooks`, a webhook's delivery log
 * (`GET .../deliveries`, `.../redeliver`) and `POST .../test` (sends a `webhook.test` event now
 * and answers the attempt). The `secret` is in the creation answer only: keep it to verify
 * deliveries with `verifyWebhookSignature`.
 */
import type { ListFilters, ListItem, RequestBody, ResponseBody } from "../operation-types.js";
import { PaginatedList } from "../paginated-list.js";
import type { ParleyApi } from "../parley-api.js";
import { fetchOptions, listQuery, type RequestOptions } from "../request-options.js";
import { unwrap } from "../unwrap.js";

export type Webhook = ResponseBody<"getWebhook">;
/** The creation answer: the webhook with its `secret`. */
export type CreatedWebhook = ResponseBody<"createWebhook">;
export type WebhookListItem = ListItem<"listWebhooks">;
export type CreateWebhookBody = RequestBody<"createWebhook">;
export type UpdateWebhookBody = RequestBody<"updateWebhook">;
export type WebhookListFilters = ListFilters<"listWebhooks">;
export type WebhookDelivery = ResponseBody<"getWebhookDelivery">;
export type WebhookDeliveryListItem = ListItem<"listWebhookDeliveries">;
export type WebhookDeliveryListFilters = ListFilters<"listWebhookDeliveries">;

export function webhooksResource(api: ParleyApi) {
  const webhookPath = (webhookId: string) => ({ webhook_id: webhookId });
  return {
    /** Creates a webhook (201); the answer is the only one that shows `secret`. */
    create: (body: CreateWebhookBody, options?: RequestOptions) => unwrap(api.POST("/v1/webhooks", { body, ...fetchOptions(options) })),
    get: (webhookId: string, options?: RequestOptions) => unwrap(api.GET("/v1/webhooks/{webhook_id}", { params: { path: webhookPath(webhookId) }, ...fetchOptions(options) })),
    /** Every webhook matching `filters` (`status`), following cursors. */
    list: (filters?: WebhookListFilters, options?: RequestOptions) =>
      new PaginatedList<WebhookListItem>((cursor) => unwrap(api.GET("/v1/webhooks", { params: { query: listQuery(filters, cursor) }, ...fetchOptions(options) }))),
    /** Changes the given fields only (`status: "active"` re-enables an inactive webhook). */
    update: (webhookId: string, body: UpdateWebhookBody, options?: RequestOptions) =>
      unwrap(api.PATCH("/v1/webhooks/{webhook_id}", { params: { path: webhookPath(webhookId) }, body, ...fetchOptions(options) })),
    /** Deletes a webhook permanently. */
    delete: (webhookId: string, options?: RequestOptions) => unwrap(api.DELETE("/v1/webhooks/{webhook_id}", { params: { path: webhookPath(webhookId) }, ...fetchOptions(options) })),
    /** Sends the webhook a `webhook.test` event now and answers the attempt's outcome. */
    test: (webhookId: string, options?: RequestOptions) => unwrap(api.POST("/v1/webhooks/{webhook_id}/test", { params: { path: webhookPath(webhookId) }, ...fetchOptions(options) })),
    /** The webhook's deliveries (`status`, `event` filters), following cursors. */
    deliveries: (webhookId: string, filters?: WebhookDeliveryListFilters, options?: RequestOptions) =>
      new PaginatedList<WebhookDeliveryListItem>((cursor) =>
        unwrap(api.GET("/v1/webhooks/{webhook_id}/deliveries", { params: { path: webhookPath(webhookId), query: listQuery(filters, cursor) }, ...fetchOptions(options) })),
      ),
    /** One delivery with its attempts. */
    delivery: (webhookId: string, deliveryId: string, options?: RequestOptions) =>
      unwrap(api.GET("/v1/webhooks/{webhook_id}/deliveries/{delivery_id}", { params: { path: { webhook_id: webhookId, delivery_id: deliveryId } }, ...fetchOptions(options) })),
    /** Sends a delivery again (409 `delivery_in_progress` while one is under way). */
    redeliver: (webhookId: string, deliveryId: string, options?: RequestOptions) =>
      unwrap(
        api.POST("/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", { params: { path: { webhook_id: webhookId, delivery_id: deliveryId } }, ...fetchOptions(options) }),
      ),
  };
}

export type WebhooksResource = ReturnType<typeof webhooksResource>;
