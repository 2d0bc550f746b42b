import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { nowIso, startOfUtcMonth } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import { CallsRepository, type CallRecord } from "../db/repositories/calls.js";
import { PhoneNumbersRepository, type PhoneNumberFilters, type PhoneNumberRecord } from "../db/repositories/phone-numbers.js";
import type { CreatePhoneNumberInput, UpdatePhoneNumberInput } from "../http/schemas/phone-numbers.js";
import type { AgentsService } from "./agents.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { findOwned } from "./ownership.js";

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
 * release. A number is held (active or pending) by one account at a time; released rows stay
 * as `inactive` so old calls keep their context.
 */
export class PhoneNumbersService {
  private readonly numbers: PhoneNumbersRepository;
  private readonly calls: CallsRepository;

  constructor(
    db: Db,
    private readonly deps: { agents: AgentsService; cursors: CursorCodec },
  ) {
    this.numbers = new PhoneNumbersRepository(db);
    this.calls = new CallsRepository(db);
  }

  async create(accountId: string, input: CreatePhoneNumberInput): Promise<PhoneNumberRecord> {
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
      status: "active",
      default_agent_id: input.default_agent_id ?? null,
      created_at: at,
      updated_at: at,
    };
    if (!(await this.numbers.insert(record))) throw await this.inUse(accountId, record.phone_number);
    return record;
  }

  /** The account's active number `phoneNumber`: where an inbound call to it is routed. */
  findActiveByNumber(accountId: string, phoneNumber: string): Promise<PhoneNumberRecord | undefined> {
    return this.numbers.findActive(accountId, phoneNumber);
  }

  /** The active number `phoneNumber`, whichever account holds it (numbers are unique while held): inbound routing. */
  async findActiveAnywhere(phoneNumber: string): Promise<PhoneNumberRecord | undefined> {
    const holder = await this.numbers.findHolder(phoneNumber);
    return holder?.status === "active" ? holder : undefined;
  }

  async get(accountId: string, id: string): Promise<PhoneNumberRecord> {
    return findOwned(await this.numbers.findById(id), accountId, NOT_FOUND);
  }

  list(accountId: string, filters: PhoneNumberFilters, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "phone_numbers",
      filters: { ...filters },
      query,
      fetch: (page) => this.numbers.page(accountId, filters, page),
      count: () => this.numbers.count(accountId, filters),
      present: (row: PhoneNumberRecord) => row,
    });
  }

  async update(accountId: string, id: string, input: UpdatePhoneNumberInput): Promise<PhoneNumberRecord> {
    const current = await this.get(accountId, id);
    if (input.default_agent_id) await this.deps.agents.get(accountId, input.default_agent_id);
    const patch: Partial<PhoneNumberRecord> = {};
    if (input.friendly_name !== undefined) patch.friendly_name = input.friendly_name;
    if (input.default_agent_id !== undefined) patch.default_agent_id = input.default_agent_id;
    if (input.status !== undefined) patch.status = input.status;
    const at = nextUpdatedAt(current.updated_at);
    // Re-activating a released number fails when another account has registered it since.
    if (!(await this.numbers.update(id, { ...patch, updated_at: at }))) throw await this.inUse(accountId, current.phone_number);
    return { ...current, ...patch, updated_at: at };
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

  private async inUse(accountId: string, phoneNumber: string): Promise<ApiError> {
    const holder = await this.numbers.findHolder(phoneNumber);
    const message =
      holder?.account_id === accountId
        ? `${phoneNumber} is already registered on this account as ${holder.id}`
        : `${phoneNumber} is held by another account; it must be released there first`;
    return new ApiError(409, "phone_number_in_use", message);
  }
}
