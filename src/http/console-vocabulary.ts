import { CALL_OUTCOMES, ENDPOINTING_MODES } from "../../engine/index.js";
import { ACTIVE_CALL_STATUSES, CALL_DIRECTIONS, CALL_STATUSES } from "../db/repositories/calls.js";
import { CONTACT_STATUSES } from "../db/repositories/campaign-contacts.js";
import { CAMPAIGN_STATUSES } from "../db/repositories/campaigns.js";
import { DELIVERY_STATUSES } from "../db/repositories/deliveries.js";
import { WEBHOOK_STATUSES } from "../db/repositories/webhooks.js";
import { AGENT_MODELS } from "../services/agent-defaults.js";
import { EVENT_NAMES } from "../services/event-names.js";
import { PERMISSIONS } from "../services/permissions.js";

/** The API's fixed vocabularies the console's filters and forms offer, from the service's own lists. */
const VOCABULARY = {
  CALL_STATUSES,
  LIVE_CALL_STATUSES: ACTIVE_CALL_STATUSES,
  CALL_DIRECTIONS,
  CALL_OUTCOMES,
  AGENT_MODELS,
  ENDPOINTING_MODES,
  EVENT_NAMES,
  WEBHOOK_STATUSES,
  DELIVERY_STATUSES,
  CAMPAIGN_STATUSES,
  CONTACT_STATUSES,
  /** The permissions a key can hold (`*` is all of them; a `:write` includes its `:read`). */
  PERMISSIONS,
};

/**
 * The console's `lib/api-values.js`, written from the lists the service validates with, so
 * the console cannot offer a value the API refuses or miss one it has.
 */
export function consoleVocabularyModule(): string {
  const lines = Object.entries(VOCABULARY).map(([name, values]) => `export const ${name} = ${JSON.stringify(values)};`);
  return `// The API's fixed vocabularies, written by the service (src/http/console-vocabulary.ts).\n${lines.join("\n")}\n`;
}
