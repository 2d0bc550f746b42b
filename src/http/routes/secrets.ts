import type { Services } from "../../services/container.js";
import type { SecretSummary } from "../../db/repositories/secrets.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { listSecretsQuery, putSecretBody, secretDeletedSchema, secretListSchema, secretNameParam, secretSchema } from "../schemas/secrets.js";

/** Only these fields: a value is never part of an answer. */
function present(secret: SecretSummary) {
  return { object: "secret" as const, name: secret.name, created_at: secret.created_at, updated_at: secret.updated_at };
}

export function secretRoutes({ secrets }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/secrets",
      operationId: "putSecret",
      summary: "Store a secret, or replace the value of the one of that name (201 created, 200 replaced); the value is never shown",
      tag: "Secrets",
      permission: "secrets:write",
      body: putSecretBody,
      response: secretSchema,
      status: 201,
      alsoStatus: { status: 200, description: "A secret of that name existed: its value is replaced" },
      errors: ["invalid_request", "secret_limit_reached"],
      handler: async ({ auth, body, res }) => {
        const { secret, created } = await secrets.put(auth.account.id, body.name, body.value);
        if (!created) res.locals.status = 200;
        return present(secret);
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/secrets",
      operationId: "listSecrets",
      summary: "List the account's secrets: names and times, never values",
      tag: "Secrets",
      permission: "secrets:read",
      query: listSecretsQuery,
      response: secretListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor"],
      handler: async ({ auth, query }) => {
        const result = await secrets.list(auth.account.id, query);
        return { ...result, data: result.data.map(present) };
      },
    }),
    defineRoute({
      method: "delete",
      path: "/v1/secrets/:name",
      operationId: "deleteSecret",
      summary: "Delete a secret permanently",
      tag: "Secrets",
      permission: "secrets:write",
      params: secretNameParam,
      response: secretDeletedSchema,
      status: 200,
      errors: ["invalid_request", "secret_not_found"],
      handler: async ({ auth, params }) => {
        await secrets.delete(auth.account.id, params.name);
        return { name: params.name, deleted: true as const };
      },
    }),
  ];
}
