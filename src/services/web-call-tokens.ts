import { ApiError } from "../core/api-error.js";
import { newId, randomBase62 } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { hashToken } from "../core/token-hash.js";
import type { Db } from "../db/database.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { MAX_CALL_DURATION_SECONDS } from "./call-limits.js";
import type { AgentsService } from "./agents.js";
import type { LiveCallsService } from "./live-calls.js";

/** How long a browser call token can be used: long enough to open a page and allow the microphone. */
export const WEB_CALL_TOKEN_TTL_SECONDS = 300;
/** Unused, unexpired tokens an account may hold: a client minting tokens in a loop is refused, not stored. */
export const MAX_OPEN_WEB_CALL_TOKENS = 100;
/** Expired tokens are kept this long, so their use is refused as expired rather than unknown, then deleted. */
const EXPIRED_KEPT_MS = 60 * 60 * 1000;
const TOKEN_PREFIX = "wct_";

export interface WebCallRequest {
  agent_id: string;
  context?: Record<string, unknown> | undefined;
  record?: boolean | undefined;
  max_duration?: number | undefined;
}

export interface IssuedWebCallToken {
  callId: string;
  token: string;
  expiresAt: string;
}

/** What a redeemed token allows: one call of this account with this agent, under this id. */
export interface WebCallGrant {
  accountId: string;
  agentId: string;
  callId: string;
  context: Record<string, unknown>;
  record: boolean;
  maxDuration: number;
}

/**
 * Short-lived, single-use tokens for browser calls: a browser's WebSocket cannot send an
 * Authorization header, so the page's backend (or the console, with the user's key) asks for
 * a token and the browser connects with it in the query of `/media/ws`. A token is bound to
 * one account, agent and call id, is stored hashed, and is redeemed by one conditional UPDATE,
 * so two sockets racing with it cannot both get the call. The call's context it carries is
 * emptied as it is redeemed, or once it expires (forgetExpiredWebCallTokens).
 */
export class WebCallTokens {
  constructor(
    private readonly db: Db,
    private readonly deps: { agents: AgentsService; liveCalls: LiveCallsService },
  ) {}

  /** A token for a call of `account` with the agent asked for, refused as the call itself would be (agent, credit, live calls). */
  async issue(account: AccountRecord, request: WebCallRequest): Promise<IssuedWebCallToken> {
    const agent = await this.deps.agents.get(account.id, request.agent_id);
    const context = request.context ?? {};
    const record = request.record ?? true;
    const maxDuration = request.max_duration ?? MAX_CALL_DURATION_SECONDS;
    await this.deps.liveCalls.checkStartable({ account, agent, direction: "web", phoneNumber: null, fromNumber: null, record, maxDuration, metadata: {}, context });
    const now = Date.now();
    const token = `${TOKEN_PREFIX}${randomBase62(43)}`;
    const issued = { callId: newId("call"), token, expiresAt: new Date(now + WEB_CALL_TOKEN_TTL_SECONDS * 1000).toISOString() };
    await this.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom("web_call_tokens")
        .where("account_id", "=", account.id)
        .where("expires_at", "<", new Date(now - EXPIRED_KEPT_MS).toISOString())
        .execute();
      const open = await trx
        .selectFrom("web_call_tokens")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("account_id", "=", account.id)
        .where("used_at", "is", null)
        .where("expires_at", ">", new Date(now).toISOString())
        .executeTakeFirstOrThrow();
      if (Number(open.n) >= MAX_OPEN_WEB_CALL_TOKENS) {
        throw new ApiError(429, "rate_limit_exceeded", `The account already holds ${MAX_OPEN_WEB_CALL_TOKENS} unused web call tokens; use them or let them expire`, undefined, {
          "Retry-After": String(WEB_CALL_TOKEN_TTL_SECONDS),
        });
      }
      await trx
        .insertInto("web_call_tokens")
        .values({
          token_hash: hashToken(token),
          account_id: account.id,
          agent_id: agent.id,
          call_id: issued.callId,
          context: JSON.stringify(context),
          record: record ? 1 : 0,
          max_duration: maxDuration,
          expires_at: issued.expiresAt,
          used_at: null,
          created_at: nowIso(),
        })
        .execute();
    });
    return issued;
  }

  /**
   * Uses the token up and says what it allows; a 401 naming why when it is unknown, used or
   * expired. With `agentId` (the agent the client asks for), a token of another agent is
   * refused with 403 and stays usable for its own.
   */
  /**
   * The account of a token that could be redeemed now, without using it up: the call's slot
   * is taken first, so a browser refused for capacity can retry with the same token. The same
   * refusals as `redeem` otherwise.
   */
  async accountOf(token: string): Promise<string> {
    if (!token.startsWith(TOKEN_PREFIX)) throw invalidCallToken();
    const hash = hashToken(token);
    const row = await this.db
      .selectFrom("web_call_tokens")
      .select("account_id")
      .where("token_hash", "=", hash)
      .where("used_at", "is", null)
      .where("expires_at", ">", new Date().toISOString())
      .executeTakeFirst();
    if (!row) throw await this.whyNotRedeemable(hash, undefined);
    return row.account_id;
  }

  async redeem(token: string, agentId?: string): Promise<WebCallGrant> {
    if (!token.startsWith(TOKEN_PREFIX)) throw invalidCallToken();
    const hash = hashToken(token);
    const now = new Date().toISOString();
    // The context goes to the call; the token keeps none (the call's content can then be removed whole).
    const row = await this.db.transaction().execute(async (trx) => {
      let redeem = trx
        .updateTable("web_call_tokens")
        .set({ used_at: now })
        .where("token_hash", "=", hash)
        .where("used_at", "is", null)
        .where("expires_at", ">", now);
      if (agentId !== undefined) redeem = redeem.where("agent_id", "=", agentId);
      const redeemed = await redeem.returningAll().executeTakeFirst();
      if (redeemed) await trx.updateTable("web_call_tokens").set({ context: "{}" }).where("token_hash", "=", hash).execute();
      return redeemed;
    });
    if (!row) throw await this.whyNotRedeemable(hash, agentId);
    return {
      accountId: row.account_id,
      agentId: row.agent_id,
      callId: row.call_id,
      context: JSON.parse(row.context) as Record<string, unknown>,
      record: row.record === 1,
      maxDuration: row.max_duration,
    };
  }

  /** Why the token with `hash` cannot be redeemed (for `agentId`): the error to answer with. */
  private async whyNotRedeemable(hash: string, agentId: string | undefined): Promise<ApiError> {
    const known = await this.db.selectFrom("web_call_tokens").select(["used_at", "agent_id"]).where("token_hash", "=", hash).executeTakeFirst();
    if (!known) return invalidCallToken();
    if (agentId !== undefined && known.agent_id !== agentId) return new ApiError(403, "forbidden", "This web call token is for another agent");
    if (known.used_at) return new ApiError(401, "call_token_used", "This web call token has been used already: ask POST /v1/calls/web for a new one");
    return new ApiError(401, "call_token_expired", `This web call token has expired (they last ${WEB_CALL_TOKEN_TTL_SECONDS / 60} minutes): ask POST /v1/calls/web for a new one`);
  }
}

/**
 * Forgets what tokens no longer need (the retention job runs it every minute): the context of
 * expired ones (a token never used would hold it until deleted), and tokens expired over an
 * hour ago (till then their use is refused as expired rather than unknown). Returns the rows
 * changed or deleted.
 */
export async function forgetExpiredWebCallTokens(db: Db, now = Date.now()): Promise<number> {
  const at = new Date(now).toISOString();
  const cleared = await db.updateTable("web_call_tokens").set({ context: "{}" }).where("expires_at", "<=", at).where("context", "<>", "{}").executeTakeFirst();
  const deleted = await db
    .deleteFrom("web_call_tokens")
    .where("expires_at", "<", new Date(now - EXPIRED_KEPT_MS).toISOString())
    .executeTakeFirst();
  return Number(cleared.numUpdatedRows) + Number(deleted.numDeletedRows);
}

/** The refusal of a token that opens nothing: unknown, forged, or its account gone. */
export function invalidCallToken(): ApiError {
  return new ApiError(401, "invalid_call_token", "The web call token is not valid");
}
