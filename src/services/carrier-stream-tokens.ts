import { randomBase62 } from "../core/ids.js";
import { hashToken } from "../core/token-hash.js";
import type { Db } from "../db/database.js";

const TOKEN_PREFIX = "cst_";
/** Expired tokens are kept this long (a replay is then refused as used or expired, not unknown), then deleted. */
const KEPT_MS = 60 * 60 * 1000;

/** What a carrier's media stream is for, as its token was issued. */
export interface StreamGrant {
  carrier: string;
  accountId: string;
  /** `inbound`: a call the carrier's voice webhook announced; `outbound`: one Parley dialled through it. */
  direction: "inbound" | "outbound";
  /** The outbound call's id (its dial waits for the stream); null for inbound calls, made as the stream starts. */
  callId: string | null;
  agentId: string | null;
  phoneNumber: string | null;
  fromNumber: string | null;
  /** The carrier's id of the call, when known as the token was issued (an inbound call's CallSid). */
  carrierCallId: string | null;
}

/** Why a token opens nothing. */
export type StreamTokenRefusal = "unknown" | "used" | "expired";

/**
 * Single-use tokens for carriers' media streams: Parley answers a carrier's voice webhook (or
 * places a call through its API) with instructions to open a stream to Parley carrying one,
 * instead of an account's secret written into TwiML by hand. A token is bound to the call it was
 * issued for, stored hashed, and redeemed by one conditional UPDATE: a replayed or copied token
 * is refused, on any node.
 */
export class CarrierStreamTokens {
  constructor(private readonly db: Db) {}

  async issue(grant: StreamGrant, ttlMs: number, now = Date.now()): Promise<string> {
    const token = `${TOKEN_PREFIX}${randomBase62(43)}`;
    await this.db
      .insertInto("carrier_stream_tokens")
      .values({
        token_hash: hashToken(token),
        carrier: grant.carrier,
        account_id: grant.accountId,
        direction: grant.direction,
        call_id: grant.callId,
        agent_id: grant.agentId,
        phone_number: grant.phoneNumber,
        from_number: grant.fromNumber,
        carrier_call_id: grant.carrierCallId,
        expires_at: new Date(now + ttlMs).toISOString(),
        used_at: null,
        created_at: new Date(now).toISOString(),
      })
      .execute();
    return token;
  }

  /** Records the carrier's id of the call a token was issued for, once the carrier has given it (an outbound call's, after it is placed). */
  async bind(carrier: string, token: string, carrierCallId: string): Promise<void> {
    await this.db.updateTable("carrier_stream_tokens").set({ carrier_call_id: carrierCallId }).where("token_hash", "=", hashToken(token)).where("carrier", "=", carrier).execute();
  }

  /** Uses the token up: what it grants, or why it grants nothing. */
  async redeem(carrier: string, token: string, now = Date.now()): Promise<StreamGrant | { refused: StreamTokenRefusal }> {
    if (!token.startsWith(TOKEN_PREFIX)) return { refused: "unknown" };
    const hash = hashToken(token);
    const at = new Date(now).toISOString();
    const row = await this.db
      .updateTable("carrier_stream_tokens")
      .set({ used_at: at })
      .where("token_hash", "=", hash)
      .where("carrier", "=", carrier)
      .where("used_at", "is", null)
      .where("expires_at", ">", at)
      .returningAll()
      .executeTakeFirst();
    if (!row) {
      const known = await this.db.selectFrom("carrier_stream_tokens").select("used_at").where("token_hash", "=", hash).where("carrier", "=", carrier).executeTakeFirst();
      return { refused: !known ? "unknown" : known.used_at ? "used" : "expired" };
    }
    return {
      carrier: row.carrier,
      accountId: row.account_id,
      direction: row.direction === "outbound" ? "outbound" : "inbound",
      callId: row.call_id,
      agentId: row.agent_id,
      phoneNumber: row.phone_number,
      fromNumber: row.from_number,
      carrierCallId: row.carrier_call_id,
    };
  }
}

/**
 * Deletes the tokens expired over an hour ago, with the numbers they held (the retention job
 * runs it every minute, beside forgetExpiredWebCallTokens). Returns the rows deleted.
 */
export async function forgetExpiredCarrierStreamTokens(db: Db, now = Date.now()): Promise<number> {
  const deleted = await db.deleteFrom("carrier_stream_tokens").where("expires_at", "<", new Date(now - KEPT_MS).toISOString()).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
