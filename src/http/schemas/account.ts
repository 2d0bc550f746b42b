import { z } from "zod";
import { PLANS } from "../../config.js";
import { LEDGER_REASONS } from "../../db/repositories/ledger.js";
import { listEnvelope, listQueryShape } from "./common.js";

const limitsShape = {
  agents: z.number().int(),
  webhooks: z.number().int(),
  concurrent_calls: z.number().int(),
  queued_calls: z.number().int(),
};

/** GET /v1/account/key: the key making the request (never its secret value). */
export const callerKeySchema = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string().describe("the key's first characters, to tell keys apart"),
  permissions: z.array(z.string()).describe('what the key may do; ["*"] for everything'),
  created_at: z.string(),
});

export const accountSchema = z.object({
  id: z.string(),
  name: z.string(),
  plan: z.enum(PLANS),
  credit_balance: z.number().int(),
  limits: z.object({ requests_per_minute: z.number().int(), ...limitsShape }),
  usage: z.object(limitsShape),
  signing_secret: z
    .string()
    .nullable()
    .describe("Signs deliveries to a call's own webhook_url; null unless the key holds webhooks:write (or *)"),
  media_token_set: z.boolean().describe("Whether the account has a media token for /media/twilio; the token itself is shown only when it is made"),
  media_token_created_at: z.string().nullable(),
  retention_days: z
    .number()
    .int()
    .nullable()
    .describe("Days an ended call keeps its recording, transcript and analysis before a daily job removes them (the billing record stays); null: kept until deleted. Set by the operator"),
  created_at: z.string(),
});

export const mediaTokenSchema = z.object({
  media_token: z.string().describe("Shown this once: only its hash is kept"),
  media_token_created_at: z.string(),
});

export const ledgerEntrySchema = z.object({
  id: z.string(),
  amount: z.number().int(),
  balance_after: z.number().int(),
  reason: z.enum(LEDGER_REASONS),
  call_id: z.string().nullable(),
  description: z.string().nullable(),
  created_at: z.string(),
});

export const ledgerQuery = z.object({ ...listQueryShape }).strict();
export const ledgerListSchema = listEnvelope(ledgerEntrySchema);
