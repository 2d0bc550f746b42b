import { ApiError } from "../core/api-error.js";
import { randomBase62 } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { hashToken } from "../core/token-hash.js";
import type { Config } from "../config.js";
import type { Db } from "../db/database.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { CallCommands } from "./call-commands.js";
import type { CallsService } from "./calls.js";

/** What a supervisor asks of a live call through the API. */
export type SupervisorAction = { action: "say"; text: string } | { action: "whisper"; text: string } | { action: "hand_back" };

/** How a listener joins a call: to listen, or to take it over (its audio replaces the agent's). */
export const LISTEN_MODES = ["listen", "takeover"] as const;
export type ListenMode = (typeof LISTEN_MODES)[number];

/** The node's side of supervision: the live calls it runs (see MediaGateway). */
export interface LiveSupervision {
  /** Carries `action` out on the call; false when the call is not live on this node. */
  supervise(callId: string, action: SupervisorAction): boolean;
}

const TOKEN_PREFIX = "lst_";
/** A listen token must be used within this (a browser asks for it just before it connects). */
export const LISTEN_TOKEN_TTL_SECONDS = 60;
/** Unused, unexpired listen tokens an account may hold: more is a flood, not supervisors. */
const MAX_OPEN_LISTEN_TOKENS = 20;

/**
 * Live supervision (issue 32) on the control plane: a supervisor's `say`, `whisper` and
 * `hand_back` reach the call where it runs (this node, or the node running it through a call
 * command), and single-use tokens let a browser open `/media/listen`. Every call is the
 * account's own (another account's is 403, as for every call route).
 */
export class CallSupervision {
  private live: LiveSupervision | undefined;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, "node">,
    private readonly deps: { calls: CallsService; commands: CallCommands; nodeId: string },
  ) {}

  /** This node's live calls can be supervised from now on (its media gateway runs). */
  attach(live: LiveSupervision): void {
    this.live = live;
  }

  /** Carries out `action` on the account's call, in progress on this node or on another one that is alive. */
  async act(accountId: string, callId: string, action: SupervisorAction): Promise<{ call_id: string; action: SupervisorAction["action"]; status: "accepted" }> {
    const call = await this.inProgress(accountId, callId);
    const accepted = { call_id: call.id, action: action.action, status: "accepted" as const };
    if (this.live?.supervise(call.id, action)) return accepted;
    const owner = call.node_id;
    if (owner && owner !== this.deps.nodeId && (await this.deps.commands.isAlive(owner, Date.now() - this.config.node.graceMs))) {
      await this.deps.commands.send(owner, call.id, action.action, "text" in action ? action.text : null);
      return accepted;
    }
    throw new ApiError(409, "call_not_in_progress", `Call ${call.id} is not running on any node (it may have just ended)`);
  }

  /** A token to open `/media/listen` on the call once, within a minute (listen needs calls:read, takeover calls:write: checked by the route). */
  async listenToken(accountId: string, callId: string, mode: ListenMode): Promise<{ token: string; call_id: string; mode: ListenMode; expires_at: string; url: string }> {
    const call = await this.inProgress(accountId, callId);
    const now = Date.now();
    const token = `${TOKEN_PREFIX}${randomBase62(43)}`;
    const expiresAt = new Date(now + LISTEN_TOKEN_TTL_SECONDS * 1000).toISOString();
    await this.db.transaction().execute(async (trx) => {
      // Under the account's lock, so requests at once cannot each count 19 and all insert.
      await holdAccountLock(trx, accountId);
      await trx.deleteFrom("listen_tokens").where("account_id", "=", accountId).where("expires_at", "<", new Date(now).toISOString()).execute();
      const open = await trx.selectFrom("listen_tokens").select((eb) => eb.fn.countAll().as("n")).where("account_id", "=", accountId).where("used_at", "is", null).executeTakeFirstOrThrow();
      if (Number(open.n) >= MAX_OPEN_LISTEN_TOKENS) {
        throw new ApiError(429, "rate_limit_exceeded", `The account already holds ${MAX_OPEN_LISTEN_TOKENS} unused listen tokens; use them or let them expire`, undefined, { "Retry-After": String(LISTEN_TOKEN_TTL_SECONDS) });
      }
      await trx.insertInto("listen_tokens").values({ token_hash: hashToken(token), account_id: accountId, call_id: call.id, mode, expires_at: expiresAt, used_at: null, created_at: nowIso() }).execute();
    });
    return { token, call_id: call.id, mode, expires_at: expiresAt, url: `/media/listen?call_id=${call.id}&token=${token}` };
  }

  /** Uses a listen token for `callId` (once: one conditional UPDATE); what it grants, or null when unknown, used, expired or for another call. */
  async redeem(token: string, callId: string): Promise<{ accountId: string; mode: ListenMode } | null> {
    if (!token.startsWith(TOKEN_PREFIX)) return null;
    const hash = hashToken(token);
    const now = nowIso();
    const used = await this.db
      .updateTable("listen_tokens")
      .set({ used_at: now })
      .where("token_hash", "=", hash)
      .where("call_id", "=", callId)
      .where("used_at", "is", null)
      .where("expires_at", ">", now)
      .executeTakeFirst();
    if (used.numUpdatedRows === 0n) return null;
    const row = await this.db.selectFrom("listen_tokens").select(["account_id", "mode"]).where("token_hash", "=", hash).executeTakeFirstOrThrow();
    return { accountId: row.account_id, mode: row.mode as ListenMode };
  }

  private async inProgress(accountId: string, callId: string): Promise<CallRecord> {
    const call = await this.deps.calls.get(accountId, callId);
    if (call.status !== "in_progress") throw new ApiError(409, "call_not_in_progress", `Call ${call.id} is ${call.status}: only a call in progress can be supervised`);
    return call;
  }
}
