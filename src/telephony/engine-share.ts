import { ApiError } from "../core/api-error.js";
import { KeyedSlots, type Slot } from "../core/keyed-slots.js";

/** One call's hold on the engine, from before it connects until its end is stored. */
export type EngineSlot = Slot;

/** How long a caller refused for capacity should wait: calls last minutes. */
const RETRY_AFTER_SECONDS = "30";

/**
 * Shares the engine's call capacity (what the box can carry, PARLEY_CALL_CAPACITY) between
 * accounts. While the installation has more than one account, one account may hold at most
 * `sharePercent` of the slots (at least one): a tenant opening idle calls cannot take every
 * slot and leave the others none. A single account may use them all. Past its share an
 * account's call is refused like one past its concurrent-call limit (429); past the engine's
 * capacity any call is refused 503 `engine_at_capacity`. Both say so before anything is
 * created, instead of the call failing once it has started. Kept in memory: slots are this
 * process's calls.
 */
export class EngineShare {
  private readonly slots: KeyedSlots;

  constructor(
    private readonly config: {
      /** Calls the box carries at once (PARLEY_CALL_CAPACITY, or its default). */
      capacity: number;
      sharePercent: number;
      /** Accounts on the installation (a share applies only when there are several). */
      countAccounts: () => Promise<number>;
    },
  ) {
    this.slots = new KeyedSlots(config.capacity);
  }

  /** Most slots one account may hold while there are `accounts` accounts. */
  shareOf(accounts: number): number {
    const { capacity, sharePercent } = this.config;
    return accounts > 1 ? Math.max(1, Math.floor((capacity * sharePercent) / 100)) : capacity;
  }

  /** Slots held now, in all and by `accountId`. */
  held(accountId?: string): number {
    return this.slots.held(accountId);
  }

  /** A slot for a call of `accountId`, or an ApiError (429 past its share, 503 past capacity). */
  async take(accountId: string): Promise<EngineSlot> {
    const { capacity } = this.config;
    const share = this.shareOf(await this.config.countAccounts());
    // A full engine is reported as such even to an account at its share: nobody can call now.
    const slot = this.held() >= capacity ? ({ refused: "total" } as const) : this.slots.take(accountId, share);
    if (!("refused" in slot)) return slot;
    if (slot.refused === "total") {
      throw new ApiError(503, "engine_at_capacity", `All ${capacity} of the engine's call slots are in use (PARLEY_CALL_CAPACITY); try again shortly`, undefined, {
        "Retry-After": RETRY_AFTER_SECONDS,
      });
    }
    throw new ApiError(
      429,
      "rate_limit_exceeded",
      `The account holds ${this.held(accountId)} of the engine's ${capacity} call slots, the most one account may hold while others share this installation (PARLEY_ENGINE_ACCOUNT_SHARE_PERCENT)`,
      undefined,
      { "Retry-After": RETRY_AFTER_SECONDS },
    );
  }
}
