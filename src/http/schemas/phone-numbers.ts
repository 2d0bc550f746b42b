import { z } from "zod";
import { CARRIERS } from "../../config.js";
import { normaliseCountryCode } from "../../core/country-codes.js";
import { PHONE_NUMBER_STATUSES } from "../../db/repositories/phone-numbers.js";
import { callListItemSchema } from "./calls-shared.js";
import { e164, includeQuery, listEnvelope, listQueryShape } from "./common.js";
import type { CreatePhoneNumberInput, UpdatePhoneNumberInput } from "../../services/phone-numbers.js";

const COUNTRY_RULE = "must be a two-letter ISO 3166-1 country code like US";

/** Two-letter ISO country code in any case, stored upper-case. */
const countryCode = z.string({ error: COUNTRY_RULE }).transform((value, ctx) => {
  const code = normaliseCountryCode(value);
  if (code === null) {
    ctx.addIssue({ code: "custom", message: COUNTRY_RULE });
    return z.NEVER;
  }
  return code;
});

const text = (max: number) =>
  z
    .string({ error: "must be a string" })
    .max(max, { message: `must be at most ${max} characters` })
    .transform((s) => s.trim())
    .refine((s) => s.length > 0, { message: "must not be empty" });

const agentId = z.string({ error: "must be an agent id or null" }).min(1, { message: "must not be empty" }).nullable();

/** Clients may release (`inactive`) and re-activate an approved number; `pending` is not theirs to set. */
const CLIENT_STATUSES = ["active", "inactive"] as const;

export const createPhoneNumberBody = z
  .object({
    phone_number: e164("phone_number"),
    friendly_name: text(100).optional(),
    country: countryCode,
    region: text(64).optional(),
    capabilities: z
      .object({
        voice: z.boolean({ error: "must be true or false" }).default(true),
        sms: z.boolean({ error: "must be true or false" }).default(false),
      })
      .strict()
      .optional(),
    default_agent_id: agentId.optional(),
  })
  .strict();

export const updatePhoneNumberBody = z
  .object({
    friendly_name: text(100).optional(),
    default_agent_id: agentId.optional(),
    status: z.enum(CLIENT_STATUSES, { error: "must be active or inactive" }).optional(),
  })
  .strict();


export const listPhoneNumbersQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(PHONE_NUMBER_STATUSES, { error: "must be active, pending or inactive" }).optional(),
    country: countryCode.optional(),
  })
  .strict();

export const getPhoneNumberQuery = z.object({ include: includeQuery(["stats", "recent_calls"] as const) }).strict();

export const phoneNumberSchema = z.object({
  id: z.string(),
  phone_number: z.string(),
  friendly_name: z.string(),
  country: z.string(),
  region: z.string().nullable(),
  capabilities: z.object({ voice: z.boolean(), sms: z.boolean() }),
  carrier: z.enum(CARRIERS).describe("The carrier the number is held at: the one the operator named when adding it, else the service's default (PARLEY_CARRIER). Read-only"),
  status: z.enum(PHONE_NUMBER_STATUSES),
  default_agent_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const phoneNumberStatsSchema = z.object({
  total_calls: z.number().int(),
  total_minutes: z.number().int(),
  calls_this_month: z.number().int(),
  minutes_this_month: z.number().int(),
});

export const phoneNumberReadSchema = phoneNumberSchema.extend({
  stats: phoneNumberStatsSchema.optional(),
  recent_calls: z.array(callListItemSchema).optional(),
});

export const phoneNumberListSchema = listEnvelope(phoneNumberSchema);

// The bodies validate into what the service takes (its input types are its own).
createPhoneNumberBody satisfies z.ZodType<CreatePhoneNumberInput>;
updatePhoneNumberBody satisfies z.ZodType<UpdatePhoneNumberInput>;
