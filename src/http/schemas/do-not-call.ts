import { z } from "zod";
import { DO_NOT_CALL_SOURCES } from "../../db/repositories/do-not-call.js";
import { e164, listEnvelope, listQueryShape } from "./common.js";

export const addDoNotCallBody = z.object({ phone_number: e164("phone_number") }).strict();

/** `{phone_number}` in the path: E.164, with its `+` as is or URL-encoded (`%2B`). */
export const doNotCallNumberParam = z.object({ phone_number: e164("phone_number") }).strict();

export const listDoNotCallQuery = z.object({ ...listQueryShape }).strict();

export const doNotCallEntrySchema = z.object({
  id: z.string(),
  phone_number: z.string(),
  source: z.enum(DO_NOT_CALL_SOURCES).describe("api (added through the API) or callee_request (the callee asked on a call)"),
  call_id: z.string().nullable().describe("The call on which the callee asked"),
  created_at: z.string(),
});

export const doNotCallListSchema = listEnvelope(doNotCallEntrySchema);

export const doNotCallDeletedSchema = z.object({ phone_number: z.string(), deleted: z.literal(true) });
