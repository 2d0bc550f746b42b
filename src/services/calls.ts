import type { Config } from "../config.js";
import { ApiError } from "../core/api-error.js";
import { callingCode } from "../core/calling-code.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { AgentsRepository } from "../db/repositories/agents.js";
import { CallsRepository, unfinishedCallFields, ENDED_CALL_STATUSES, type CallFilters, type CallRecord, type CallStatus } from "../db/repositories/calls.js";
import { PhoneNumbersRepository } from "../db/repositories/phone-numbers.js";
import { MAX_CALL_DURATION_SECONDS, type CreateCallInput } from "../http/schemas/calls.js";
import type { AccountsService } from "./accounts.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import { findOwned } from "./ownership.js";
import { requireCallCredit } from "./call-credit.js";
import { parseWebhookUrl } from "./webhook-url.js";

const NOT_FOUND = { code: "call_not_found", message: "No call with this id" };

/** Hangs up calls whose media runs in this process (the media gateway). */
export interface LiveCallControl {
  /** Ends the live call and waits until its end is stored; false when it is not live here. */
  hangUp(callId: string): Promise<boolean>;
}

/**
 * How long a client told to wait by the queued-call limit should wait: queued calls drain as
 * live calls end, which takes minutes rather than seconds.
 */
const QUEUED_LIMIT_RETRY_AFTER_SECONDS = 60;

/**
 * Calls on the control-plane side: create (stored `queued`; placing it is the telephony
 * layer's job), list, read, end.
 */
export class CallsService {
  private readonly calls: CallsRepository;
  private readonly agents: AgentsRepository;
  private readonly numbers: PhoneNumbersRepository;
  private liveControl: LiveCallControl | undefined;
  private readonly queuedListeners: Array<(accountId: string) => void> = [];

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly deps: { accounts: AccountsService; cursors: CursorCodec },
  ) {
    this.calls = new CallsRepository(db);
    this.agents = new AgentsRepository(db);
    this.numbers = new PhoneNumbersRepository(db);
  }

  /**
   * Checks, in this order after validation: the agent (another account's agent is "not
   * found" too, as DESIGN decides for call creation), that it is active, the from number,
   * credits, then the queued-call limit.
   */
  async create(account: AccountRecord, input: CreateCallInput): Promise<CallRecord> {
    // The URL rule depends on configuration, so it is checked here, before the other checks, as validation.
    if (input.webhook_url !== undefined) parseWebhookUrl(input.webhook_url, this.config.webhooks, "webhook_url");
    const agent = await this.agents.findById(input.agent_id);
    if (!agent || agent.account_id !== account.id) throw new ApiError(404, "agent_not_found", `No agent ${input.agent_id}`);
    if (agent.status !== "active") {
      throw new ApiError(409, "agent_inactive", `Agent ${agent.id} is inactive; set its status to active to place calls with it`);
    }
    const fromNumber = await this.fromNumber(account.id, input.from_number);
    await this.checkDestination(account.id, input.phone_number);
    requireCallCredit(account, this.config.credits);
    const at = nowIso();
    const call: CallRecord = {
      id: newId("call"),
      account_id: account.id,
      agent_id: agent.id,
      campaign_id: null,
      direction: "outbound",
      status: "queued",
      phone_number: input.phone_number,
      from_number: fromNumber,
      metadata: input.metadata ?? {},
      context: input.context ?? {},
      record: input.record ?? true,
      max_duration: input.max_duration ?? MAX_CALL_DURATION_SECONDS,
      webhook_url: input.webhook_url ?? null,
      ...unfinishedCallFields(),
      created_at: at,
      answered_at: null,
      updated_at: at,
    };
    const limit = this.deps.accounts.limitsOf(account).queuedCalls;
    // Count and insert in one transaction so two concurrent creates cannot both pass the limit.
    await this.db.transaction().execute(async (trx) => {
      if ((await this.calls.countInStatus(account.id, "queued", trx)) >= limit) {
        throw new ApiError(
          429,
          "rate_limit_exceeded",
          `The account already has ${limit} queued calls, its limit; retry when some have been placed`,
          undefined,
          { "Retry-After": String(QUEUED_LIMIT_RETRY_AFTER_SECONDS) },
        );
      }
      await this.calls.insert(call, trx);
    });
    for (const listener of this.queuedListeners) listener(account.id);
    return call;
  }

  /**
   * Toll-fraud guard: the destination must start with an allowed prefix, by default the
   * calling code of one of the account's active numbers (PARLEY_CALL_PREFIXES overrides).
   */
  private async checkDestination(accountId: string, destination: string): Promise<void> {
    const configured = this.config.callPrefixes.trim();
    if (configured === "*") return;
    const allowed = configured
      ? configured.split(",").map((p) => p.trim())
      : [...new Set((await this.numbers.activeNumbers(accountId)).map(callingCode))];
    if (!allowed.some((prefix) => destination.startsWith(prefix))) {
      throw ApiError.field(
        "invalid_phone_number",
        "phone_number",
        `calls to ${callingCode(destination)} are not allowed for this account (allowed: ${allowed.join(", ") || "none"}); PARLEY_CALL_PREFIXES sets the allowed prefixes`,
      );
    }
  }

  /** Called with the account whenever a call is queued (the dispatcher places it when a slot is free). */
  onQueued(listener: (accountId: string) => void): void {
    this.queuedListeners.push(listener);
  }

  async get(accountId: string, id: string): Promise<CallRecord> {
    return findOwned(await this.calls.findById(id), accountId, NOT_FOUND);
  }

  list(accountId: string, filters: CallFilters, query: ListQuery) {
    return listPage({
      codec: this.deps.cursors,
      list: "calls",
      filters: { ...filters },
      query,
      fetch: (page) => this.calls.page(accountId, filters, page),
      count: () => this.calls.count(accountId, filters),
      present: (row: CallRecord) => row,
    });
  }

  /**
   * Ends a call at the client's request. Until the telephony layer can hang up live media,
   * this only settles the record:
   * - `queued` (never placed) becomes `failed`: it never connected;
   * - `ringing` becomes `no_answer`: nobody picked up;
   * - `in_progress` becomes `completed`, its duration counted from `answered_at`.
   * A call that has already ended is 409 `call_already_ended`.
   */
  /** Lets `end` hang up calls with live media (set once the media gateway runs). */
  attachLiveControl(control: LiveCallControl): void {
    this.liveControl = control;
  }

  async end(accountId: string, id: string): Promise<CallRecord> {
    await this.get(accountId, id);
    // A call with live media is hung up for real; its end, transcript and charge are stored by the media side.
    if (this.liveControl && (await this.liveControl.hangUp(id))) return (await this.calls.findById(id))!;
    // Read and write in one transaction so a status change by the engine cannot slip in between.
    return this.db.transaction().execute(async (trx) => {
      const call = (await this.calls.findById(id, trx))!;
      if ((ENDED_CALL_STATUSES as readonly CallStatus[]).includes(call.status)) {
        throw new ApiError(409, "call_already_ended", `Call ${id} has already ended (${call.status})`);
      }
      const at = nowIso();
      const status: CallStatus = call.status === "queued" ? "failed" : call.status === "ringing" ? "no_answer" : "completed";
      const duration =
        call.status === "in_progress" && call.answered_at !== null
          ? Math.max(0, Math.floor((Date.parse(at) - Date.parse(call.answered_at)) / 1000))
          : null;
      const patch = { status, ended_at: at, duration, updated_at: at };
      await this.calls.update(id, patch, trx);
      return { ...call, ...patch };
    });
  }

  /** The given from number must be one of the account's active numbers; by default its oldest active one. */
  private async fromNumber(accountId: string, given: string | undefined): Promise<string> {
    if (given !== undefined) {
      if (!(await this.numbers.findActive(accountId, given))) {
        throw ApiError.field("invalid_from_number", "from_number", `${given} is not an active number of this account; GET /v1/phone-numbers lists them`);
      }
      return given;
    }
    const oldest = await this.numbers.oldestActive(accountId);
    if (!oldest) {
      throw ApiError.field(
        "invalid_from_number",
        "from_number",
        "the account has no active phone number to call from; register one with POST /v1/phone-numbers or `parley admin number add`",
      );
    }
    return oldest.phone_number;
  }
}
