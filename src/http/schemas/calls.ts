import { z } from "zod";
import { CALL_DIRECTIONS, CALL_STATUSES } from "../../db/repositories/calls.js";
import { callListItemSchema } from "./calls-shared.js";
import { checkDateRange, dateRangeShape, e164, includeQuery, listEnvelope, listQueryShape, metadataSchema } from "./common.js";

export const MAX_CALL_DURATION_SECONDS = 3600;

const maxDurationRule = `must be an integer from 1 to ${MAX_CALL_DURATION_SECONDS} (seconds)`;

export const createCallBody = z
  .object({
    phone_number: e164("phone_number").optional(),
    /** The earlier guide's name for phone_number. */
    to: e164("to").optional(),
    agent_id: z.string({ error: "must be an agent id" }).min(1, { message: "must not be empty" }),
    from_number: e164("from_number").optional(),
    metadata: metadataSchema.optional(),
    /** The guide's personalisation values for the agent (customer name, purpose, ...). */
    context: metadataSchema.optional(),
    // Checked against the webhook URL policy (which depends on configuration) by the service.
    webhook_url: z.string({ error: "must be an https:// URL" }).optional(),
    record: z.boolean({ error: "must be true or false" }).optional(),
    max_duration: z
      .number({ error: maxDurationRule })
      .int({ message: maxDurationRule })
      .min(1, { message: maxDurationRule })
      .max(MAX_CALL_DURATION_SECONDS, { message: maxDurationRule })
      .optional(),
  })
  .strict()
  // Runs even when other fields failed, so a missing destination is reported with them.
  .superRefine(
    (value, ctx) => {
      if (typeof value !== "object" || value === null) return;
      if (value.to !== undefined && value.phone_number !== undefined) {
        ctx.addIssue({ code: "custom", path: ["to"], message: "give phone_number or its alias to, not both" });
      } else if (value.to === undefined && value.phone_number === undefined) {
        ctx.addIssue({ code: "custom", path: ["phone_number"], message: "is required" });
      }
    },
    { when: () => true },
  )
  .transform(({ to, phone_number, ...rest }) => ({ ...rest, phone_number: (phone_number ?? to)! }));

export type CreateCallInput = z.output<typeof createCallBody>;

export const listCallsQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(CALL_STATUSES, { error: `must be one of ${CALL_STATUSES.join(", ")}` }).optional(),
    agent_id: z.string().min(1, { message: "must not be empty" }).optional(),
    phone_number: e164("phone_number").optional(),
    direction: z.enum(CALL_DIRECTIONS, { error: `must be one of ${CALL_DIRECTIONS.join(", ")}` }).optional(),
    ...dateRangeShape,
  })
  .strict()
  .superRefine(checkDateRange);

export const getCallQuery = z.object({ include: includeQuery(["transcript", "recording", "analysis"] as const) }).strict();

/** What POST /v1/calls answers: the reference's creation fields plus `direction`. */
export const callCreatedSchema = callListItemSchema
  .pick({ id: true, status: true, direction: true, phone_number: true, from_number: true, agent_id: true, metadata: true, created_at: true })
  .extend({ record: z.boolean() });

export const callSchema = callListItemSchema.extend({
  record: z.boolean(),
  max_duration: z.number().int(),
  answered_at: z.string().nullable(),
});

export const callReadSchema = callSchema.extend({
  transcript: z.array(z.object({ role: z.enum(["agent", "user"]), content: z.string(), timestamp: z.number() })).optional(),
  recording_url: z.string().nullable().optional(),
  analysis: z.record(z.string(), z.unknown()).nullable().optional(),
});

export const callListSchema = listEnvelope(callListItemSchema);
