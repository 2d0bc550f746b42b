import { z } from "zod";
import { CALL_DIRECTIONS, CALL_STATUSES } from "../../db/repositories/calls.js";

/** A call as list items and `recent_calls` show it. */
export const callListItemSchema = z.object({
  id: z.string(),
  status: z.enum(CALL_STATUSES),
  direction: z.enum(CALL_DIRECTIONS),
  /** Null on web calls, which have no phone numbers. */
  phone_number: z.string().nullable(),
  from_number: z.string().nullable(),
  agent_id: z.string(),
  duration: z.number().int().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  ended_at: z.string().nullable(),
});
