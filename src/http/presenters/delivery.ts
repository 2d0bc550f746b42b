import type { DeliveryWithAttempts } from "../../services/webhook-deliveries.js";

/** A delivery as the API shows it: its log of attempts, and when the next one is due. */
export function presentDelivery(delivery: DeliveryWithAttempts) {
  return {
    id: delivery.id,
    webhook_id: delivery.webhook_id,
    event_id: delivery.event_id,
    event: delivery.event_name,
    status: delivery.status,
    attempt_count: delivery.attempts.length,
    attempts: delivery.attempts.map((a) => ({
      number: a.number,
      started_at: a.started_at,
      duration_ms: a.duration_ms,
      status_code: a.status_code,
      error: a.error,
      response_body: a.response_body,
    })),
    next_attempt_at: delivery.status === "pending" && delivery.next_attempt_at !== null ? new Date(delivery.next_attempt_at).toISOString() : null,
    created_at: delivery.created_at,
    completed_at: delivery.completed_at,
  };
}
