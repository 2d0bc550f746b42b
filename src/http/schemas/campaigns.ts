import { z } from "zod";
import { parseIsoTimestamp } from "../../core/time.js";
import { CONTACT_STATUSES } from "../../db/repositories/campaign-contacts.js";
import { CAMPAIGN_STATUSES } from "../../db/repositories/campaigns.js";
import { CAMPAIGN_LIMITS } from "../../services/campaigns.js";
import { e164, includeQuery, listEnvelope, listQueryShape, metadataSchema } from "./common.js";

const L = CAMPAIGN_LIMITS;
const maxConcurrentMessage = `must be an integer from 1 to ${L.maxConcurrent}`;

const contactInput = z
  .object(
    {
      phone: e164("phone"),
      context: metadataSchema.optional(),
    },
    { error: "must be an object {phone, context}" },
  )
  .strict();

/** Contacts in calling order; a number appears once (a repeat names the first position). */
const contactsField = z
  .array(contactInput, { error: "must be an array of {phone, context} objects" })
  .min(1, { message: "must hold at least one contact" })
  .max(L.contacts, { message: `must hold at most ${L.contacts} contacts` })
  .superRefine((contacts, ctx) => {
    const firstAt = new Map<string, number>();
    contacts.forEach((contact, i) => {
      const at = firstAt.get(contact.phone);
      if (at === undefined) firstAt.set(contact.phone, i);
      else ctx.addIssue({ code: "custom", path: [i], message: `phone ${contact.phone} repeats contacts[${at}].phone; each number may appear once` });
    });
  });

const scheduleField = z
  .string({ error: "must be an ISO 8601 date-time string or null" })
  .transform((value, ctx) => {
    const parsed = parseIsoTimestamp(value);
    if (parsed === null) {
      ctx.addIssue({ code: "custom", message: "must be an ISO 8601 date-time like 2026-03-01T09:00:00Z" });
      return z.NEVER;
    }
    return parsed;
  })
  .nullable();

export const createCampaignBody = z
  .object({
    name: z
      .string({ error: "must be a string" })
      .max(L.name, { message: `must be at most ${L.name} characters` })
      .refine((s) => s.trim().length > 0, { message: "must not be empty" }),
    agent_id: z.string({ error: "must be a string" }).min(1, { message: "must not be empty" }),
    contacts: contactsField,
    settings: z
      .object(
        {
          max_concurrent: z
            .number({ error: maxConcurrentMessage })
            .int({ message: maxConcurrentMessage })
            .min(1, { message: maxConcurrentMessage })
            .max(L.maxConcurrent, { message: maxConcurrentMessage })
            .optional(),
          retry_no_answer: z.boolean({ error: "must be true or false" }).optional(),
          schedule: scheduleField.optional(),
        },
        { error: "must be an object {max_concurrent, retry_no_answer, schedule}" },
      )
      .strict()
      .optional(),
  })
  .strict();

export type CreateCampaignInput = z.output<typeof createCampaignBody>;

export const listCampaignsQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(CAMPAIGN_STATUSES, { error: `must be one of ${CAMPAIGN_STATUSES.join(", ")}` }).optional(),
  })
  .strict();

export const getCampaignQuery = z.object({ include: includeQuery(["contacts"] as const) }).strict();

export const campaignContactSchema = z.object({
  id: z.string(),
  phone: z.string(),
  context: z.record(z.string(), z.unknown()),
  status: z.enum(CONTACT_STATUSES),
  call_id: z.string().nullable(),
  attempts: z.number().int(),
});

/** How many contacts are in each status, and in all. */
const contactCountsSchema = z.object({
  total: z.number().int(),
  pending: z.number().int(),
  in_progress: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
});

export const campaignSchema = z.object({
  id: z.string(),
  name: z.string(),
  agent_id: z.string(),
  status: z.enum(CAMPAIGN_STATUSES),
  settings: z.object({
    max_concurrent: z.number().int(),
    retry_no_answer: z.boolean(),
    schedule: z.string().nullable(),
  }),
  contacts: contactCountsSchema,
  created_at: z.string(),
  updated_at: z.string(),
});

/** With `include=contacts`, `contacts` also holds every contact in calling order under `data`. */
export const campaignReadSchema = campaignSchema.extend({
  contacts: contactCountsSchema.extend({ data: z.array(campaignContactSchema).optional() }),
});

export const campaignListSchema = listEnvelope(campaignSchema);
