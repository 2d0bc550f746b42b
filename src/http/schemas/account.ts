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

export const accountSchema = z.object({
  id: z.string(),
  name: z.string(),
  plan: z.enum(PLANS),
  credit_balance: z.number().int(),
  limits: z.object({ requests_per_minute: z.number().int(), ...limitsShape }),
  usage: z.object(limitsShape),
  signing_secret: z.string(),
  media_token: z.string(),
  created_at: z.string(),
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
