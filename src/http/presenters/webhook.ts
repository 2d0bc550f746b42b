import type { WebhookRecord } from "../../db/repositories/webhooks.js";

/** A webhook as reads, lists and updates show it: never the secret. */
export function presentWebhook(webhook: WebhookRecord) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    description: webhook.description,
    status: webhook.status,
    metadata: webhook.metadata,
    created_at: webhook.created_at,
    updated_at: webhook.updated_at,
  };
}

/** The creation response: the signing secret, shown this once. */
export function presentCreatedWebhook(webhook: WebhookRecord) {
  return { ...presentWebhook(webhook), secret: webhook.secret };
}
