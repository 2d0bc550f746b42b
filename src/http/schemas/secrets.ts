import { z } from "zod";
import { SECRET_NAME_PATTERN, SECRET_VALUE_MAX } from "../../services/secrets.js";
import { listEnvelope, listQueryShape } from "./common.js";

const NAME_RULE = "must start with a letter or _ and hold only letters, digits and _, at most 64 characters";

const nameField = z.string({ error: "must be a string" }).regex(SECRET_NAME_PATTERN, { message: NAME_RULE }).describe(`${SECRET_NAME_PATTERN.source}: what {{secrets.NAME}} refers to`);

/**
 * `{name, value}`. The value's messages never quote it (nor does any message of validation.ts's:
 * they name the field), so a refused value reaches no response or log line.
 */
export const putSecretBody = z
  .object({
    name: nameField,
    value: z
      .string({ error: "must be a string" })
      .min(1, { message: `must be 1 to ${SECRET_VALUE_MAX} characters` })
      .max(SECRET_VALUE_MAX, { message: `must be 1 to ${SECRET_VALUE_MAX} characters` })
      .describe("Write-only: stored, sent by the account's tools, never returned"),
  })
  .strict();

export const secretNameParam = z.object({ name: nameField }).strict();

export const listSecretsQuery = z.object({ ...listQueryShape }).strict();

/** A secret as every response shows it: never its value. */
export const secretSchema = z.object({
  object: z.literal("secret"),
  name: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const secretListSchema = listEnvelope(secretSchema);

export const secretDeletedSchema = z.object({ name: z.string(), deleted: z.literal(true) });
