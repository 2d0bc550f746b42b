import { z } from "zod";
import { DELIVERY_STATUSES } from "../../db/repositories/deliveries.js";
import { listEnvelope, listQueryShape } from "./common.js";

export const listDeliveriesQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(", ")}` }).optional(),
    event: z.string().min(1, { message: "must not be empty" }).max(100, { message: "must be at most 100 characters" }).optional(),
    call_id: z.string().min(1, { message: "must not be empty" }).max(100, { message: "must be at most 100 characters" }).optional(),
  })
  .strict();

export const deliverySchema = z.object({
  id: z.string(),
  webhook_id: z.string().nullable(),
  event_id: z.string(),
  event: z.string().describe("The name it is delivered under"),
  status: z.enum(DELIVERY_STATUSES),
  attempt_count: z.number().int(),
  attempts: z.array(
    z.object({
      number: z.number().int(),
      started_at: z.string(),
      duration_ms: z.number().int(),
      status_code: z.number().int().nullable().describe("The receiver's HTTP status; null when none came"),
      error: z.string().nullable(),
      response_body: z.string().nullable().describe("The start of the receiver's answer (at most 1024 bytes)"),
    }),
  ),
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});

export const deliveryListSchema = listEnvelope(deliverySchema);
