import { z } from "zod";
import { EVENT_NAMES } from "../../services/event-names.js";
import { TEST_EVENT } from "../../services/outbox.js";
import { DATE_RANGE_ISSUE, dateRangeInOrder, dateRangeShape, listEnvelope, listQueryShape } from "./common.js";

const STORED_NAMES: readonly string[] = [...EVENT_NAMES, TEST_EVENT];

export const listEventsQuery = z
  .object({
    ...listQueryShape,
    name: z
      .string()
      .refine((n) => STORED_NAMES.includes(n), { message: `must be an event name: ${STORED_NAMES.join(", ")}` })
      .optional(),
    call_id: z.string().min(1, { message: "must not be empty" }).max(100, { message: "must be at most 100 characters" }).optional(),
    ...dateRangeShape,
  })
  .strict()
  .refine(dateRangeInOrder, DATE_RANGE_ISSUE);

export const eventSchema = z.object({
  id: z.string(),
  event: z.string().describe("The event's name (call.started, not its alias call.initiated)"),
  sequence: z.number().int().describe("Increases in the order events were stored"),
  timestamp: z.string(),
  call_id: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  withheld: z
    .array(z.string())
    .describe("Content fields left out of data because the key lacks calls:read (call events) or appointments:read (appointment events); empty when none"),
});

export const eventListSchema = listEnvelope(eventSchema);
