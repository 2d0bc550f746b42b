import { z } from "zod";
import type { Services } from "../../services/container.js";
import { presentDelivery } from "../presenters/delivery.js";
import { presentCreatedWebhook, presentWebhook } from "../presenters/webhook.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { deletedSchema, idParam } from "../schemas/common.js";
import { deliveryListSchema, deliverySchema, listDeliveriesQuery } from "../schemas/deliveries.js";
import { createdWebhookSchema, createWebhookBody, listWebhooksQuery, updateWebhookBody, webhookListSchema, webhookSchema } from "../schemas/webhooks.js";

const webhookIdParam = idParam("webhook_id");

const deliveryParams = z.object({ webhook_id: z.string().min(1), delivery_id: z.string().min(1) }).strict();

export function webhookRoutes({ webhooks, webhookDeliveries }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/webhooks",
      operationId: "createWebhook",
      summary: "Create a webhook (the response shows its signing secret, once)",
      tag: "Webhooks",
      permission: "webhooks:write",
      body: createWebhookBody,
      response: createdWebhookSchema,
      status: 201,
      errors: ["invalid_request", "invalid_url", "invalid_events", "url_unreachable", "webhook_limit_reached"],
      secretFields: ["secret"],
      handler: async ({ auth, body }) => presentCreatedWebhook(await webhooks.create(auth.account, body)),
    }),
    defineRoute({
      method: "get",
      path: "/v1/webhooks",
      operationId: "listWebhooks",
      summary: "List webhooks",
      tag: "Webhooks",
      permission: "webhooks:read",
      query: listWebhooksQuery,
      response: webhookListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "invalid_status"],
      handler: async ({ auth, query }) => {
        const { status, ...page } = query;
        const result = await webhooks.list(auth.account.id, { status }, page);
        return { ...result, data: result.data.map(presentWebhook) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/webhooks/:webhook_id",
      operationId: "getWebhook",
      summary: "Read a webhook",
      tag: "Webhooks",
      permission: "webhooks:read",
      params: webhookIdParam,
      response: webhookSchema,
      status: 200,
      errors: ["webhook_not_found", "unauthorized"],
      handler: async ({ auth, params }) => presentWebhook(await webhooks.get(auth.account.id, params.webhook_id)),
    }),
    defineRoute({
      method: "patch",
      path: "/v1/webhooks/:webhook_id",
      operationId: "updateWebhook",
      summary: "Update a webhook (only the given fields change; the secret is never shown again)",
      tag: "Webhooks",
      permission: "webhooks:write",
      params: webhookIdParam,
      body: updateWebhookBody,
      response: webhookSchema,
      status: 200,
      errors: ["webhook_not_found", "unauthorized", "invalid_request", "invalid_url", "invalid_events", "invalid_status", "url_unreachable"],
      handler: async ({ auth, params, body }) => presentWebhook(await webhooks.update(auth.account.id, params.webhook_id, body)),
    }),
    defineRoute({
      method: "delete",
      path: "/v1/webhooks/:webhook_id",
      operationId: "deleteWebhook",
      summary: "Delete a webhook permanently",
      tag: "Webhooks",
      permission: "webhooks:write",
      params: webhookIdParam,
      response: deletedSchema,
      status: 200,
      errors: ["webhook_not_found", "unauthorized"],
      handler: async ({ auth, params }) => {
        await webhooks.delete(auth.account.id, params.webhook_id);
        return { id: params.webhook_id, deleted: true };
      },
    }),
      defineRoute({
      method: "get",
      path: "/v1/webhooks/:webhook_id/deliveries",
      operationId: "listWebhookDeliveries",
      summary: "List a webhook's deliveries, each with its attempts (the delivery log)",
      tag: "Webhooks",
      permission: "webhooks:read",
      params: webhookIdParam,
      query: listDeliveriesQuery,
      response: deliveryListSchema,
      status: 200,
      errors: ["webhook_not_found", "unauthorized", "invalid_request", "invalid_cursor", "invalid_status"],
      handler: async ({ auth, params, query }) => {
        const { status, event, call_id, ...page } = query;
        const result = await webhookDeliveries.list(auth.account.id, params.webhook_id, { status, eventName: event, callId: call_id }, page);
        return { ...result, data: result.data.map(presentDelivery) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/webhooks/:webhook_id/deliveries/:delivery_id",
      operationId: "getWebhookDelivery",
      summary: "Read one delivery with its attempts",
      tag: "Webhooks",
      permission: "webhooks:read",
      params: deliveryParams,
      response: deliverySchema,
      status: 200,
      errors: ["webhook_not_found", "delivery_not_found", "unauthorized"],
      handler: async ({ auth, params }) => presentDelivery(await webhookDeliveries.get(auth.account.id, params.webhook_id, params.delivery_id)),
    }),
    defineRoute({
      method: "post",
      path: "/v1/webhooks/:webhook_id/deliveries/:delivery_id/redeliver",
      operationId: "redeliverWebhookDelivery",
      summary: "Send a delivered, failed or skipped delivery again now (same id and body, fresh signature); answers the attempt's outcome",
      tag: "Webhooks",
      permission: "webhooks:write",
      params: deliveryParams,
      response: deliverySchema,
      status: 200,
      errors: ["webhook_not_found", "delivery_not_found", "unauthorized", "delivery_in_progress", "rate_limit_exceeded"],
      handler: async ({ auth, params }) => presentDelivery(await webhookDeliveries.redeliver(auth.account.id, params.webhook_id, params.delivery_id)),
    }),
    defineRoute({
      method: "post",
      path: "/v1/webhooks/:webhook_id/test",
      operationId: "testWebhook",
      summary: "Send the webhook a webhook.test event now; answers the attempt's outcome",
      tag: "Webhooks",
      permission: "webhooks:write",
      params: webhookIdParam,
      response: deliverySchema,
      status: 200,
      errors: ["webhook_not_found", "unauthorized", "rate_limit_exceeded"],
      handler: async ({ auth, params }) => presentDelivery(await webhookDeliveries.sendTest(auth.account.id, params.webhook_id)),
    }),
  ];
}
