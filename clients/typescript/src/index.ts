/**
 * @parley/client: a typed client for Parley's /v1 API.
 *
 * - `createParleyClient` (parley-client.ts): the client, its resource helpers and `api`, the
 *   typed openapi-fetch client.
 * - `PaginatedList` (paginated-list.ts): `for await` over every item of a list, following cursors.
 * - `ParleyApiError` (parley-api-error.ts): what a non-2xx answer throws.
 * - Idempotency keys (idempotency-key.ts) and retries (retrying-fetch.ts), applied to every request.
 * - `verifyWebhookSignature` (webhook-signature.ts): checks a delivery's `X-Parley-Signature`.
 * - The document's types (schema.ts, generated; operation-types.ts to read them by operation id).
 */
export { createParleyClient, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_AFTER_SECONDS, type ParleyClient, type ParleyClientOptions } from "./parley-client.js";
export type { ParleyApi } from "./parley-api.js";
export { ParleyApiError, retryAfterSeconds, type FieldProblem } from "./parley-api-error.js";
export { unwrap, type ApiResult } from "./unwrap.js";
export { PaginatedList, type FetchPage, type ListPage } from "./paginated-list.js";
export { IDEMPOTENCY_HEADER, idempotencyKeyMiddleware, newIdempotencyKey } from "./idempotency-key.js";
export { retryDelayMs, retryingFetch, type FetchFunction, type RetryPolicy } from "./retrying-fetch.js";
export type { RequestOptions } from "./request-options.js";
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  verifyWebhookEvent,
  verifyWebhookSignature,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookSignatureError,
  type VerifiedWebhookSignature,
  type VerifyWebhookSignatureOptions,
  type WebhookEventPayload,
  type WebhookSignatureFailure,
} from "./webhook-signature.js";
export type { ListFilters, ListItem, OperationId, QueryParams, RequestBody, ResponseBody, SuccessStatus } from "./operation-types.js";
export type { Account, AccountResource, CallerKey, LedgerEntry, LedgerListFilters } from "./resources/account.js";
export type { Agent, AgentListFilters, AgentListItem, AgentsResource, AgentWithIncludes, CreateAgentBody, UpdateAgentBody } from "./resources/agents.js";
export type { Call, CallListFilters, CallListItem, CallsResource, CreateCallBody, CreatedCall } from "./resources/calls.js";
export type { Campaign, CampaignContact, CampaignContactListFilters, CampaignListFilters, CampaignListItem, CampaignsResource, CreateCampaignBody } from "./resources/campaigns.js";
export type { EventListFilters, EventsResource, ParleyEvent, ParleyEventListItem } from "./resources/events.js";
export type { CreatePhoneNumberBody, PhoneNumber, PhoneNumberListFilters, PhoneNumberListItem, PhoneNumbersResource, UpdatePhoneNumberBody } from "./resources/phone-numbers.js";
export type { Voice, VoicesResource } from "./resources/voices.js";
export type {
  CreatedWebhook,
  CreateWebhookBody,
  UpdateWebhookBody,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryListFilters,
  WebhookDeliveryListItem,
  WebhookListFilters,
  WebhookListItem,
  WebhooksResource,
} from "./resources/webhooks.js";
export type { components, operations, paths } from "./schema.js";
