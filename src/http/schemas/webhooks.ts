import { z } from "zod";
import { WEBHOOK_STATUSES } from "../../db/repositories/webhooks.js";
import { ALL_EVENTS, EVENT_ALIASES, EVENT_NAMES, isEventName, type EventName } from "../../services/event-names.js";
import { listEnvelope, listQueryShape, metadataSchema } from "./common.js";
import type { CreateWebhookInput, UpdateWebhookInput } from "../../services/webhooks.js";

const WEBHOOK_LIMITS = { url: 2048, secretMin: 16, secretMax: 256, description: 500 } as const;
const L = WEBHOOK_LIMITS;

/** Event names, or `["*"]`: unknown names are refused by name; repeats (and a second name of one event) are dropped. */
const eventsField = z
  .array(z.string({ error: "event names must be strings" }), { error: `must be an array of event names, or ["*"] for all` })
  .min(1, { message: `must name at least one event, or ["*"] for all` })
  .transform((names, ctx) => {
    if (names.includes(ALL_EVENTS)) {
      if (names.some((n) => n !== ALL_EVENTS)) ctx.addIssue({ code: "custom", message: `"*" subscribes to every event and must be given alone` });
      return [ALL_EVENTS];
    }
    const unknown = [...new Set(names.filter((n) => !isEventName(n)))];
    if (unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `unknown event name${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `'${n}'`).join(", ")}; known: ${EVENT_NAMES.join(", ")}, or "*" for all`,
      });
      return z.NEVER;
    }
    const seen = new Set<EventName>();
    return (names as EventName[]).filter((name) => {
      const event = EVENT_ALIASES[name] ?? name;
      if (seen.has(event)) return false;
      seen.add(event);
      return true;
    });
  })
  .describe(`Event names from: ${EVENT_NAMES.join(", ")}; or ["*"] alone for every event`);

const webhookFields = {
  // The scheme and host policy (https, loopback http) is the service's: it depends on configuration.
  url: z.string({ error: "must be a string" }).min(1, { message: "must not be empty" }).max(L.url, { message: `must be at most ${L.url} characters` }),
  events: eventsField,
  secret: z
    .string({ error: "must be a string" })
    .min(L.secretMin, { message: `must be ${L.secretMin} to ${L.secretMax} characters` })
    .max(L.secretMax, { message: `must be ${L.secretMin} to ${L.secretMax} characters` }),
  description: z.string({ error: "must be a string or null" }).max(L.description, { message: `must be at most ${L.description} characters` }).nullable(),
  metadata: metadataSchema,
};

export const createWebhookBody = z
  .object({
    ...webhookFields,
    secret: webhookFields.secret.optional(),
    description: webhookFields.description.optional(),
    metadata: webhookFields.metadata.optional(),
  })
  .strict();

export const updateWebhookBody = z
  .object({
    url: webhookFields.url.optional(),
    events: webhookFields.events.optional(),
    secret: webhookFields.secret.optional(),
    description: webhookFields.description.optional(),
    metadata: webhookFields.metadata.optional(),
    status: z.enum(["active", "inactive"], { error: "must be active or inactive (failing is set by deliveries)" }).optional(),
  })
  .strict();


export const listWebhooksQuery = z
  .object({
    ...listQueryShape,
    status: z.enum(WEBHOOK_STATUSES, { error: `must be one of ${WEBHOOK_STATUSES.join(", ")}` }).optional(),
  })
  .strict();

/** The webhook as every response but the creation's shows it: no secret. */
export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  status: z.enum(WEBHOOK_STATUSES),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string(),
});

/** The creation response: the only one that shows the signing secret. */
export const createdWebhookSchema = webhookSchema.extend({ secret: z.string() });

export const webhookListSchema = listEnvelope(webhookSchema);

// The bodies validate into what the service takes (its input types are its own).
createWebhookBody satisfies z.ZodType<CreateWebhookInput>;
updateWebhookBody satisfies z.ZodType<UpdateWebhookInput>;
