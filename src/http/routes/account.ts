import type { LedgerRecord } from "../../db/repositories/ledger.js";
import type { Services } from "../../services/container.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { grants } from "../../services/permissions.js";
import { accountSchema, callerKeySchema, ledgerListSchema, ledgerQuery, mediaTokenSchema } from "../schemas/account.js";

function presentLedgerEntry(e: LedgerRecord) {
  return { id: e.id, amount: e.amount, balance_after: e.balance_after, reason: e.reason, call_id: e.call_id, description: e.description, created_at: e.created_at };
}

export function accountRoutes({ accounts, apiKeys }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/account/key",
      operationId: "getCallerKey",
      summary: "The API key making this request: its name and permissions (any valid key may ask), so a client can show what it may do",
      tag: "Account",
      permission: null,
      response: callerKeySchema,
      status: 200,
      errors: [],
      handler: async ({ auth }) => {
        const key = (await apiKeys.get(auth.keyId))!;
        return { id: key.id, name: key.name, key_prefix: key.key_prefix, permissions: key.permissions, created_at: key.created_at };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/account",
      operationId: "getAccount",
      summary: "The caller's account: plan, credit balance, limits, usage; the signing secret for keys with webhooks:write; whether a media token is set",
      tag: "Account",
      permission: "account:read",
      response: accountSchema,
      status: 200,
      errors: [],
      handler: async ({ auth }) => {
        const account = (await accounts.find(auth.account.id))!;
        const limits = accounts.limitsOf(account);
        return {
          id: account.id,
          name: account.name,
          plan: account.plan,
          credit_balance: account.credit_balance,
          limits: {
            requests_per_minute: limits.requestsPerMinute,
            agents: limits.agents,
            webhooks: limits.webhooks,
            concurrent_calls: limits.concurrentCalls,
            queued_calls: limits.queuedCalls,
          },
          usage: await accounts.usage(account.id),
          // Integrators need it to verify per-call webhook_url deliveries: keys that manage webhooks.
          signing_secret: grants(auth.permissions, "webhooks:write") ? account.signing_secret : null,
          media_token_set: account.media_token_hash !== null,
          media_token_created_at: account.media_token_created_at,
          retention_days: accounts.retentionDaysOf(account),
          created_at: account.created_at,
        };
      },
    }),
    defineRoute({
      method: "post",
      path: "/v1/account/media-token/rotate",
      operationId: "rotateMediaToken",
      summary:
        "Make a new media token for /media/twilio (needs calls:write); it is shown in this response only, and the previous token is refused from now on",
      tag: "Account",
      permission: "calls:write",
      response: mediaTokenSchema,
      status: 200,
      errors: [],
      secretInResponse: true,
      handler: async ({ auth }) => accounts.rotateMediaToken(auth.account.id),
    }),
    defineRoute({
      method: "get",
      path: "/v1/account/ledger",
      operationId: "listLedger",
      summary: "Credit movements of the caller's account",
      tag: "Account",
      permission: "account:read",
      query: ledgerQuery,
      response: ledgerListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor"],
      handler: async ({ auth, query }) => {
        const page = await accounts.ledgerPage(auth.account.id, query);
        return { ...page, data: page.data.map(presentLedgerEntry) };
      },
    }),
  ];
}
