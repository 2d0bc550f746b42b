import { ApiError } from "../core/api-error.js";
import { newId } from "../core/ids.js";
import { canonicalPhoneNumber as canonical } from "../core/phone-number.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import type { CallRecord } from "../db/repositories/calls.js";
import { DoNotCallRepository, type DoNotCallRecord } from "../db/repositories/do-not-call.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";

/** The call outcome of a callee who asked not to be called again; also a refusal reason. */
export const DO_NOT_CALL_OUTCOME = "do_not_call";

/** Entries one account may list (a number is a short row; the bound keeps a runaway script finite). */
export const DO_NOT_CALL_LIMIT = 1_000_000;

/**
 * An account's do-not-call list: numbers that neither `POST /v1/calls` nor a campaign dials.
 * Numbers are added through the API, or on a call where the callee asks not to be called
 * again (the agent confirms and hangs up). The check is made when a call is created, again
 * when a queued call is dialled, and for each campaign contact before its call is made.
 *
 * Numbers are stored and looked up in canonical form (core/phone-number.ts), so a number
 * listed as `+447700900123` also stops a call to `+4407700900123`. The API's schemas give
 * canonical numbers already; the service canonicalises again whatever it is handed (a
 * stored call's or appointment's number), and keeps a number it cannot read as it is.
 */
export class DoNotCallService {
  private readonly entries: DoNotCallRepository;

  constructor(
    private readonly db: Db,
    private readonly deps: { cursors: CursorCodec },
  ) {
    this.entries = new DoNotCallRepository(db);
  }

  /** Adds a number through the API; `added` false when it was listed already (the entry is unchanged). */
  async add(accountId: string, phoneNumber: string): Promise<{ entry: DoNotCallRecord; added: boolean }> {
    if ((await this.entries.count(accountId)) >= DO_NOT_CALL_LIMIT) {
      throw new ApiError(409, "do_not_call_limit_reached", `The do-not-call list holds ${DO_NOT_CALL_LIMIT} numbers, its limit`);
    }
    return this.entries.add(this.entry(accountId, phoneNumber, "api", null));
  }

  /**
   * The far end of `call` asked not to be called again: its number is listed, naming the call
   * (the call's analysis then has the outcome `do_not_call`, even for a call a crash cut short:
   * see CallResults).
   */
  async calleeAsked(call: Pick<CallRecord, "id" | "account_id" | "direction" | "phone_number" | "from_number">): Promise<void> {
    // The far end: whom an outbound call dialled, or who called in (an inbound call's phone_number is ours).
    const farEnd = call.direction === "outbound" ? call.phone_number : call.from_number;
    if (farEnd) await this.entries.add(this.entry(call.account_id, farEnd, "callee_request", call.id));
  }

  /** Whether the far end of call `callId` asked on it not to be called again. */
  askedOnCall(callId: string, db: Db = this.db): Promise<boolean> {
    return this.entries.listedOnCall(callId, db);
  }

  async remove(accountId: string, phoneNumber: string): Promise<void> {
    if (!(await this.entries.remove(accountId, canonical(phoneNumber)))) {
      throw new ApiError(404, "do_not_call_entry_not_found", `${phoneNumber} is not on the do-not-call list`);
    }
  }

  async get(accountId: string, phoneNumber: string): Promise<DoNotCallRecord> {
    const entry = await this.entries.find(accountId, canonical(phoneNumber));
    if (!entry) throw new ApiError(404, "do_not_call_entry_not_found", `${phoneNumber} is not on the do-not-call list`);
    return entry;
  }

  async isListed(accountId: string, phoneNumber: string, db?: Db): Promise<boolean> {
    return (await this.entries.find(accountId, canonical(phoneNumber), db)) !== undefined;
  }

  /** Refuses creating a call to a listed number: 400 `phone_number_on_do_not_call_list`. */
  async check(accountId: string, phoneNumber: string, field: string): Promise<void> {
    if (await this.isListed(accountId, phoneNumber)) {
      throw ApiError.field(
        "phone_number_on_do_not_call_list",
        field,
        `${phoneNumber} is on the account's do-not-call list; DELETE /v1/do-not-call/${encodeURIComponent(phoneNumber)} removes it`,
      );
    }
  }

  list(accountId: string, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "do_not_call",
      filters: {},
      query,
      fetch: (page) => this.entries.page(accountId, page),
      count: () => this.entries.count(accountId),
      present: (row: DoNotCallRecord) => row,
    });
  }

  private entry(accountId: string, phoneNumber: string, source: DoNotCallRecord["source"], callId: string | null): DoNotCallRecord {
    return { id: newId("doNotCall"), account_id: accountId, phone_number: canonical(phoneNumber), source, call_id: callId, created_at: nowIso() };
  }
}
