import { z } from "zod";
import { parseIsoTimestamp } from "../../core/time.js";
import { CONTACT_STATUSES } from "../../db/repositories/campaign-contacts.js";
import { CAMPAIGN_STATUSES } from "../../db/repositories/campaigns.js";
import { CALLING_DAYS, parseClock, isTimeZone } from "../../core/calling-hours.js";
import { CAMPAIGN_LIMITS } from "../../services/campaigns.js";
import { e164, includeQuery, intField, listEnvelope, listQueryShape, metadataSchema } from "./common.js";
import type { CreateCampaignInput } from "../../services/campaigns.js";

const L = CAMPAIGN_LIMITS;

const timeZoneField = z
  .string({ error: "must be an IANA time zone name such as America/New_York" })
  .refine(isTimeZone, { message: "must be an IANA time zone name such as America/New_York" });

const contactInput = z
  .object(
    {
      phone: e164("phone"),
      context: metadataSchema.optional(),
      timezone: timeZoneField.optional(),
    },
    { error: "must be an object {phone, context, timezone}" },
  )
  .strict();

const clockField = z.string({ error: 'must be a time "HH:MM" (24-hour)' }).refine((v) => parseClock(v) !== null, { message: 'must be a time "HH:MM" from 00:00 to 24:00' });

const callingHoursField = z
  .object(
    {
      start: clockField,
      end: clockField,
      days: z
        .array(z.enum(CALLING_DAYS, { error: `must be one of ${CALLING_DAYS.join(", ")}` }), { error: "must be an array of day names" })
        .min(1, { message: "must name at least one day" })
        .optional(),
    },
    { error: 'must be an object {start: "HH:MM", end: "HH:MM", days}' },
  )
  .strict()
  .superRefine((hours, ctx) => {
    if (parseClock(hours.start)! >= parseClock(hours.end)!) ctx.addIssue({ code: "custom", path: ["end"], message: "must be after start (a window within one local day)" });
  })
  .transform((hours) => ({ start: hours.start, end: hours.end, days: [...new Set(hours.days ?? CALLING_DAYS)] }));

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
          max_concurrent: intField(1, L.maxConcurrent).optional(),
          retry_no_answer: z.boolean({ error: "must be true or false" }).optional(),
          schedule: scheduleField.optional(),
          from_number: e164("from_number").optional(),
          max_attempts: intField(1, L.maxAttempts).optional(),
          retry_delay_minutes: intField(0, L.retryDelayMinutes).optional(),
          calling_hours: callingHoursField.optional(),
          timezone: timeZoneField.nullable().optional(),
        },
        { error: "must be an object {max_concurrent, retry_no_answer, schedule, from_number, max_attempts, retry_delay_minutes, calling_hours, timezone}" },
      )
      .strict()
      .optional(),
  })
  .strict();


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
  timezone: z.string().nullable(),
  status: z.enum(CONTACT_STATUSES),
  reason: z.string().nullable().describe("Why the contact ended as it did: do_not_call (skipped: the number is listed), interrupted (its call was live when the service stopped), or a refusal"),
  call_id: z.string().nullable().describe("The contact's latest call"),
  attempts: z.number().int(),
  next_attempt_at: z.string().nullable().describe("When a retry waiting for its delay may be made"),
});

const contactAttemptSchema = z.object({
  call_id: z.string(),
  status: z.string(),
  outcome: z.string().nullable(),
  duration_seconds: z.number().int().nullable(),
  created_at: z.string(),
  ended_at: z.string().nullable(),
});

export const campaignContactWithAttemptsSchema = campaignContactSchema.extend({ calls: z.array(contactAttemptSchema) });

/** How many contacts are in each status, and in all. */
const contactCountsSchema = z.object({ total: z.number().int(), ...Object.fromEntries(CONTACT_STATUSES.map((s) => [s, z.number().int()])) } as Record<
  "total" | (typeof CONTACT_STATUSES)[number],
  z.ZodNumber
>);

export const campaignSchema = z.object({
  id: z.string(),
  name: z.string(),
  agent_id: z.string(),
  status: z.enum(CAMPAIGN_STATUSES),
  paused_reason: z.string().nullable().describe("requested, insufficient_credits, agent_inactive, agent_deleted, no_from_number or upgrade"),
  settings: z.object({
    max_concurrent: z.number().int(),
    retry_no_answer: z.boolean(),
    schedule: z.string().nullable(),
    from_number: z.string().nullable(),
    max_attempts: z.number().int(),
    retry_delay_minutes: z.number().int(),
    calling_hours: z.object({ start: z.string(), end: z.string(), days: z.array(z.enum(CALLING_DAYS)) }),
    timezone: z.string().nullable(),
  }),
  contacts: contactCountsSchema,
  attempts: z.number().int().describe("Calls made for the contacts, retries included"),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  estimated_finish_at: z.string().nullable().describe("For a running campaign: when it should finish at the rate of the last ten minutes"),
  created_at: z.string(),
  updated_at: z.string(),
});

/** With `include=contacts`, `contacts` also holds every contact in calling order under `data`. */
export const campaignReadSchema = campaignSchema.extend({
  contacts: contactCountsSchema.extend({ data: z.array(campaignContactSchema).optional() }),
});

export const campaignListSchema = listEnvelope(campaignSchema);

/** Contacts list in calling order unless `order=desc`. */
export const listContactsQuery = z
  .object({
    ...listQueryShape,
    order: z.enum(["asc", "desc"], { error: "must be asc or desc" }).default("asc"),
    status: z.enum(CONTACT_STATUSES, { error: `must be one of ${CONTACT_STATUSES.join(", ")}` }).optional(),
  })
  .strict();

export const contactListSchema = listEnvelope(campaignContactWithAttemptsSchema);

// The bodies validate into what the service takes (its input types are its own).
createCampaignBody satisfies z.ZodType<CreateCampaignInput>;
