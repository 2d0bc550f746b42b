import type { CarrierName } from "../config.js";
import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { canonicalPhoneNumber } from "../core/phone-number.js";
import { nowIso, startOfUtcMonth } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import { CallsRepository, type CallRecord } from "../db/repositories/calls.js";
import {
  PhoneNumbersRepository,
  type OperatorNumberFilters,
  type PhoneNumberFilters,
  type PhoneNumberRecord,
} from "../db/repositories/phone-numbers.js";
import type { AgentsService } from "./agents.js";
import type { CursorCodec } from "./cursor-codec.js";
import { jsonListPage, type ListQuery } from "./list-page.js";
import { findOwned } from "./ownership.js";
import type { Outbox } from "./outbox.js";
import { phoneNumberEventData } from "./resource-event-data.js";

/** What a number is claimed or added with (POST /v1/phone-numbers, validated). */
export interface CreatePhoneNumberInput {
  phone_number: string;
  country: string;
  friendly_name?: string;
  region?: string;
  capabilities?: { voice: boolean; sms: boolean };
  default_agent_id?: string | null;
}

/** What a number update may change (PATCH /v1/phone-numbers/{id}). */
export interface UpdatePhoneNumberInput {
  friendly_name?: string;
  default_agent_id?: string | null;
  status?: "active" | "inactive";
}

export interface PhoneNumberStats {
  total_calls: number;
  total_minutes: number;
  calls_this_month: number;
  minutes_this_month: number;
}

const RECENT_CALLS = 10;
const NOT_FOUND = { code: "phone_number_not_found", message: "No phone number with this id" };

/**
 * Phone numbers the account holds at its carrier: register, list, read with stats, update,
 * release; and the operator's approval. A number registered through the API is `pending`
 * until the operator approves it: only `active` numbers route inbound calls, serve as
 * `from_number` and widen the destination guard, so an account cannot take a number it does
 * not own. One account at a time may hold a number active; several may claim it (pending)
 * meanwhile, each account with one live row per number. Released rows stay as `inactive` so
 * old calls keep their context. Numbers are stored and looked up in canonical form
 * (core/phone-number.ts): the API's schema gives it, and lookups by number canonicalise what
 * they are handed (a SIP To, a Twilio To, the operator's --number).
 */
export class PhoneNumbersService {
  private readonly numbers: PhoneNumbersRepository;
  private readonly calls: CallsRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { agents: AgentsService; cursors: CursorCodec; outbox: Outbox },
  ) {
    this.numbers = new PhoneNumbersRepository(db);
    this.calls = new CallsRepository(db);
  }

  /** A client's claim (`POST /v1/phone-numbers`): `pending` until the operator approves it. */
  async create(accountId: string, input: CreatePhoneNumberInput): Promise<PhoneNumberRecord> {
    if (await this.numbers.findActiveHolder(input.phone_number)) throw await this.inUse(accountId, input.phone_number);
    return this.insert(accountId, input, "pending");
  }

  /**
   * The operator's `parley admin number add`: the operator vouches for the number, so it is active
   * at once. `carrier` (one of CARRIERS) is where the number is held; null: the service's default.
   * Only the operator names it: a client's claim always gets the default.
   */
  add(accountId: string, input: CreatePhoneNumberInput, carrier: CarrierName | null = null): Promise<PhoneNumberRecord> {
    return this.insert(accountId, input, "active", carrier);
  }

  private async insert(accountId: string, input: CreatePhoneNumberInput, status: "pending" | "active", carrier: CarrierName | null = null): Promise<PhoneNumberRecord> {
    if (input.default_agent_id) await this.deps.agents.get(accountId, input.default_agent_id);
    const at = nowIso();
    const record: PhoneNumberRecord = {
      id: newId("phoneNumber"),
      account_id: accountId,
      phone_number: input.phone_number,
      friendly_name: input.friendly_name ?? input.phone_number,
      country: input.country,
      region: input.region ?? null,
      capabilities: input.capabilities ?? { voice: true, sms: false },
      status,
      default_agent_id: input.default_agent_id ?? null,
      carrier,
      approved_at: status === "active" ? at : null,
      created_at: at,
      updated_at: at,
    };
    if (!(await this.write(null, record, (trx) => this.numbers.insert(record, trx)))) throw await this.inUse(accountId, record.phone_number);
    return record;
  }

  /** The account's active number `phoneNumber`: where an inbound call to it is routed. */
  findActiveByNumber(accountId: string, phoneNumber: string): Promise<PhoneNumberRecord | undefined> {
    return this.numbers.findActive(accountId, canonicalPhoneNumber(phoneNumber));
  }

  /** The active number `phoneNumber`, whichever account holds it (one at most): inbound routing. */
  findActiveAnywhere(phoneNumber: string): Promise<PhoneNumberRecord | undefined> {
    return this.numbers.findActiveHolder(canonicalPhoneNumber(phoneNumber));
  }

  async get(accountId: string, id: string): Promise<PhoneNumberRecord> {
    return findOwned(await this.numbers.findById(id), accountId, NOT_FOUND);
  }

  /**
   * A page of the account's numbers; a number that records no carrier shows `defaultCarrier`
   * (PARLEY_CARRIER), as presentPhoneNumber does.
   */
  list(accountId: string, filters: PhoneNumberFilters, query: ListQuery, defaultCarrier: string) {
    return jsonListPage({
      codec: this.deps.cursors,
      list: "phone_numbers",
      filters: { ...filters },
      query,
      fetch: async (page) => {
        const found = await this.numbers.page(accountId, filters, page);
        return { ...found, rows: found.rows.map((row) => ({ ...row, item: withDefaultCarrier(row.item, defaultCarrier) })) };
      },
      count: () => this.numbers.count(accountId, filters),
    });
  }

  /**
   * A client's change. `status: inactive` releases any of its numbers (a pending one: the claim
   * is withdrawn); `status: active` brings back only a released number that the operator
   * approved for this account, and that no other account holds active meanwhile.
   */
  async update(accountId: string, id: string, input: UpdatePhoneNumberInput): Promise<PhoneNumberRecord> {
    const current = await this.get(accountId, id);
    if (input.status === "active" && current.status !== "active" && (current.status === "pending" || current.approved_at === null)) {
      throw notApproved(current);
    }
    if (input.default_agent_id) await this.deps.agents.get(accountId, input.default_agent_id);
    const patch: Partial<PhoneNumberRecord> = {};
    if (input.friendly_name !== undefined) patch.friendly_name = input.friendly_name;
    if (input.default_agent_id !== undefined) patch.default_agent_id = input.default_agent_id;
    if (input.status !== undefined) patch.status = input.status;
    const at = nextUpdatedAt(current.updated_at);
    // Re-activating a released number fails when another account holds it active since, or
    // this account has claimed it again meanwhile.
    const next = { ...current, ...patch, updated_at: at };
    if (!(await this.write(current, next, (trx) => this.numbers.update(id, { ...patch, updated_at: at }, trx)))) throw await this.inUse(accountId, current.phone_number);
    return next;
  }

  /**
   * The operator approves a pending (or released) number: it becomes active for its account.
   * Refused with 409 `phone_number_in_use` while another account holds the number active (the
   * operator may see which) or the account has another live row for it.
   */
  async approve(id: string): Promise<PhoneNumberRecord> {
    const current = await this.find(id);
    if (!current) throw new ApiError(404, NOT_FOUND.code, `No phone number ${id}`);
    if (current.status === "active") return current;
    const at = nextUpdatedAt(current.updated_at);
    const patch = { status: "active", approved_at: at, updated_at: at } as const;
    if (!(await this.write(current, { ...current, ...patch }, (trx) => this.numbers.update(id, patch, trx)))) {
      const holder = await this.numbers.findActiveHolder(current.phone_number);
      if (holder) throw new ApiError(409, "phone_number_in_use", `${current.phone_number} is active in account ${holder.account_id} (${holder.id}); reject or release it there first`);
      throw await this.inUse(current.account_id, current.phone_number);
    }
    return { ...current, ...patch };
  }

  /**
   * The operator rejects a claim, or revokes a number: it becomes `inactive` and its approval is
   * withdrawn, so the account cannot bring it back with PATCH (it may claim it again).
   */
  async reject(id: string): Promise<PhoneNumberRecord> {
    const current = await this.find(id);
    if (!current) throw new ApiError(404, NOT_FOUND.code, `No phone number ${id}`);
    const patch = { status: "inactive", approved_at: null, updated_at: nextUpdatedAt(current.updated_at) } as const;
    await this.write(current, { ...current, ...patch }, (trx) => this.numbers.update(id, patch, trx));
    return { ...current, ...patch };
  }

  /**
   * Writes a number's change with its events, in one transaction: `phone_number.assigned` when it
   * becomes active or, active, gets another default agent; `phone_number.released` when an active
   * number stops being active. False (and no event) when the write was refused as a conflict.
   */
  private write(before: PhoneNumberRecord | null, after: PhoneNumberRecord, change: (trx: Db) => Promise<boolean>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await change(trx))) return false;
      const wasActive = before?.status === "active";
      const isActive = after.status === "active";
      const newAgent = wasActive && isActive && after.default_agent_id !== null && after.default_agent_id !== before?.default_agent_id;
      const name = (!wasActive && isActive) || newAgent ? "phone_number.assigned" : wasActive && !isActive ? "phone_number.released" : undefined;
      if (name) await this.deps.outbox.append([{ accountId: after.account_id, name, data: phoneNumberEventData(after) }], trx);
      return true;
    });
  }

  /** Any account's number by id: the operator's lookup. */
  find(id: string): Promise<PhoneNumberRecord | undefined> {
    return this.numbers.findById(id);
  }

  /** Every account's numbers matching `filters`, oldest first: the operator's list. */
  listAll(filters: OperatorNumberFilters): Promise<PhoneNumberRecord[]> {
    return this.numbers.listAll(filters.phoneNumber === undefined ? filters : { ...filters, phoneNumber: canonicalPhoneNumber(filters.phoneNumber) });
  }

  /** The account holding `phoneNumber` active, if any: shown to the operator beside other accounts' claims. */
  async activeHolderOf(phoneNumber: string): Promise<string | undefined> {
    return (await this.numbers.findActiveHolder(canonicalPhoneNumber(phoneNumber)))?.account_id;
  }

  /** Release: the number goes `inactive` (the row stays); releasing a released number is a no-op. */
  async release(accountId: string, id: string): Promise<void> {
    const current = await this.get(accountId, id);
    if (current.status !== "inactive") await this.update(accountId, id, { status: "inactive" });
  }

  /** Calls made from or received on the number by this account; "this month" is the UTC calendar month. */
  async stats(accountId: string, number: PhoneNumberRecord): Promise<PhoneNumberStats> {
    const scope = { phoneNumber: number.phone_number };
    const [all, month] = await Promise.all([
      this.calls.stats(accountId, scope),
      this.calls.stats(accountId, scope, startOfUtcMonth(new Date())),
    ]);
    return {
      total_calls: all.total_calls,
      total_minutes: all.total_minutes,
      calls_this_month: month.total_calls,
      minutes_this_month: month.total_minutes,
    };
  }

  recentCalls(accountId: string, number: PhoneNumberRecord): Promise<CallRecord[]> {
    return this.calls.recent(accountId, { phoneNumber: number.phone_number }, RECENT_CALLS);
  }

  /** Why a number cannot be held by this account now; says nothing of other accounts' rows. */
  private async inUse(accountId: string, phoneNumber: string): Promise<ApiError> {
    const own = await this.numbers.findLive(accountId, phoneNumber);
    const message = own
      ? `${phoneNumber} is already registered on this account as ${own.id} (${own.status})`
      : `${phoneNumber} is held by another account; it must be released there first`;
    return new ApiError(409, "phone_number_in_use", message);
  }
}

/**
 * A list item's JSON text with the stored null carrier replaced by the default. The item is the
 * database's JSON.stringify-exact text (json-object.ts), in which `"carrier":null` can only be that
 * key: a string value's quotes are escaped (`\"`), so no text inside one matches it.
 */
function withDefaultCarrier(item: string, defaultCarrier: string): string {
  return item.replace('"carrier":null', `"carrier":${JSON.stringify(defaultCarrier)}`);
}

function notApproved(number: PhoneNumberRecord): ApiError {
  const message =
    number.status === "pending"
      ? `${number.phone_number} is pending: it becomes active once the operator approves it (parley admin number approve ${number.id})`
      : `${number.phone_number} was not approved for this account (parley admin number approve ${number.id} is the operator's step); ` +
        "register it again with POST /v1/phone-numbers for the operator to approve";
  return new ApiError(409, "phone_number_not_approved", message);
}
