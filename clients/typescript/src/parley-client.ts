/**
 * `createParleyClient`: one object for the whole API.
 *
 *   const parley = createParleyClient({ baseUrl: "http://localhost:8080", apiKey: process.env.PARLEY_API_KEY! });
 *   const agent = await parley.agents.create({ name: "Receptionist", system_prompt: "...", voice_id: "flite-slt" });
 *   for await (const call of parley.calls.list({ status: "completed" })) console.log(call.id);
 *   const { data, error } = await parley.api.GET("/v1/agents/{agent_id}", { params: { path: { agent_id: agent.id } } });
 *
 * Every request carries the key as `Authorization: Bearer`; every POST an `Idempotency-Key`;
 * 429s (and 503s with `Retry-After`) are retried (see retrying-fetch.ts). The resource helpers
 * answer the document's types and throw `ParleyApiError` for any non-2xx answer; `api` is
 * the plain openapi-fetch client for everything else.
 */
import createClient from "openapi-fetch";
import { idempotencyKeyMiddleware } from "./idempotency-key.js";
import type { ParleyApi } from "./parley-api.js";
import { accountResource, type AccountResource } from "./resources/account.js";
import { agentsResource, type AgentsResource } from "./resources/agents.js";
import { callsResource, type CallsResource } from "./resources/calls.js";
import { campaignsResource, type CampaignsResource } from "./resources/campaigns.js";
import { eventsResource, type EventsResource } from "./resources/events.js";
import { phoneNumbersResource, type PhoneNumbersResource } from "./resources/phone-numbers.js";
import { voicesResource, type VoicesResource } from "./resources/voices.js";
import { webhooksResource, type WebhooksResource } from "./resources/webhooks.js";
import { retryingFetch, type FetchFunction } from "./retrying-fetch.js";
import type { paths } from "./schema.js";

export interface ParleyClientOptions {
  /** The service's address without `/v1`, for example `http://localhost:8080` (the paths carry `/v1`). */
  baseUrl: string;
  /** An API key (`parley admin key create`); sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** The `fetch` to send with (default: the global one). It receives a `Request`. */
  fetch?: FetchFunction;
  /** Retries of a 429, or a 503 with `Retry-After`, after the first attempt (default 2; 0 turns them off). */
  maxRetries?: number;
  /** The longest `Retry-After` the client waits for, in seconds (default 60); a longer one is thrown at once. */
  maxRetryAfterSeconds?: number;
}

export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60;

export interface ParleyClient {
  /** The typed openapi-fetch client: every operation of the document, `{data, error, response}` answers. */
  readonly api: ParleyApi;
  readonly agents: AgentsResource;
  readonly calls: CallsResource;
  readonly phoneNumbers: PhoneNumbersResource;
  readonly webhooks: WebhooksResource;
  readonly campaigns: CampaignsResource;
  readonly events: EventsResource;
  readonly account: AccountResource;
  readonly voices: VoicesResource;
}

export function createParleyClient(options: ParleyClientOptions): ParleyClient {
  const { baseUrl, apiKey } = options;
  if (typeof baseUrl !== "string" || !/^https?:\/\//.test(baseUrl)) throw new TypeError(`createParleyClient: baseUrl must be an http(s) URL, got ${JSON.stringify(baseUrl)}`);
  if (typeof apiKey !== "string" || apiKey.trim() === "") throw new TypeError("createParleyClient: apiKey must be a non-empty string");
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? DEFAULT_MAX_RETRY_AFTER_SECONDS;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError("createParleyClient: maxRetries must be an integer, 0 or more");
  if (!(maxRetryAfterSeconds >= 0)) throw new TypeError("createParleyClient: maxRetryAfterSeconds must be 0 or more");

  // The global fetch is looked up per request, so a fetch replaced after creation is used.
  const base: FetchFunction = options.fetch ?? ((request) => globalThis.fetch(request));
  const api = createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${apiKey}` },
    fetch: retryingFetch(base, { maxRetries, maxRetryAfterSeconds }),
  });
  api.use(idempotencyKeyMiddleware);

  return Object.freeze({
    api,
    agents: agentsResource(api),
    calls: callsResource(api),
    phoneNumbers: phoneNumbersResource(api),
    webhooks: webhooksResource(api),
    campaigns: campaignsResource(api),
    events: eventsResource(api),
    account: accountResource(api),
    voices: voicesResource(api),
  });
}
