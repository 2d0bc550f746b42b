import type { Config } from "../config.js";
import { ApiError } from "../core/api-error.js";
import type { LiveSupervision } from "./call-supervision.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import { AgentsRepository } from "../db/repositories/agents.js";
import { CallsRepository, unfinishedCallFields, ENDED_CALL_STATUSES, LIVE_CALL_STATUSES, type CallFilters, type CallRecord, type CallStatus } from "../db/repositories/calls.js";
import { PhoneNumbersRepository } from "../db/repositories/phone-numbers.js";
import { MAX_CALL_DURATION_SECONDS } from "./call-limits.js";
import type { AccountsService } from "./accounts.js";
import type { CallEvents } from "./call-events.js";
import type { DestinationPolicy } from "./destination-policy.js";
import type { LiveCallsService } from "./live-calls.js";
import type { CursorCodec } from "./cursor-codec.js";
import { jsonListPage, type ListQuery } from "./list-page.js";
import { insertWithinLimit, type RowLimit } from "./limited-insert.js";
import { findOwned } from "./ownership.js";
import { requireCallCredit } from "./call-credit.js";
import type { CreditReservations } from "./credit-reservations.js";
import type { WebhookTargets } from "./webhook-targets.js";
import type { DoNotCallService } from "./do-not-call.js";
import type { CallCommands } from "./call-commands.js";

/** What an outbound call is created with (POST /v1/calls, validated). */
export interface CreateCallInput {
  phone_number: string;
  agent_id: string;
  from_number?: string;
  metadata?: Record<string, unknown>;
  context?: Record<string, unknown>;
  webhook_url?: string;
  record?: boolean;
  max_duration?: number;
}

const NOT_FOUND = { code: "call_not_found", message: "No call with this id" };

/** Hangs up calls whose media runs in this process (the media gateway). */
export interface LiveCallControl extends LiveSupervision {
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
  private readonly settledListeners: Array<(callId: string) => void> = [];

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly deps: {
      accounts: AccountsService;
      cursors: CursorCodec;
      events: CallEvents;
      destinations: DestinationPolicy;
      liveCalls: LiveCallsService;
      reservations: CreditReservations;
      targets: WebhookTargets;
      doNotCall: DoNotCallService;
      /** Reach the node that runs a call. */
      commands: CallCommands;
      /** This node. */
      nodeId: string;
    },
  ) {
    this.calls = new CallsRepository(db);
    this.agents = new AgentsRepository(db);
    this.numbers = new PhoneNumbersRepository(db);
  }

  /**
   * Checks, in this order after validation: the agent (another account's agent is "not
   * found" too, as DESIGN decides for call creation), that it is active, the from number,
   * the destination, the do-not-call list, credits, then the queued-call limit.
   */
  async create(account: AccountRecord, input: CreateCallInput): Promise<CallRecord> {
    // The URL rules depend on configuration, so they are checked here, before the other checks, as validation.
    if (input.webhook_url !== undefined) await this.deps.targets.checkForStorage(account.id, input.webhook_url, { field: "webhook_url", probe: false });
    const agent = await this.agents.findById(input.agent_id);
    if (!agent || agent.account_id !== account.id) throw new ApiError(404, "agent_not_found", `No agent ${input.agent_id}`);
    if (agent.status !== "active") {
      throw new ApiError(409, "agent_inactive", `Agent ${agent.id} is inactive; set its status to active to place calls with it`);
    }
    const fromNumber = await this.fromNumber(account.id, input.from_number);
    await this.deps.destinations.check(account.id, input.phone_number, "phone_number");
    await this.deps.doNotCall.check(account.id, input.phone_number, "phone_number");
    requireCallCredit(account, this.config.credits);
    const at = nowIso();
    const call: CallRecord = {
      id: newId("call"),
      account_id: account.id,
      agent_id: agent.id,
      campaign_id: null,
      contact_id: null,
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
    const queuedLimit: RowLimit = {
      limit,
      accountId: account.id,
      count: (trx) => this.calls.countInStatus(account.id, "queued", trx),
      refusal: () =>
        new ApiError(429, "rate_limit_exceeded", `The account already has ${limit} queued calls, its limit; retry when some have been placed`, undefined, {
          "Retry-After": String(QUEUED_LIMIT_RETRY_AFTER_SECONDS),
        }),
    };
    await insertWithinLimit(this.db, queuedLimit, (trx) => this.calls.insert(call, trx));
    this.announceQueued(account.id);
    return call;
  }

  /** Tells the dispatcher the account has a call queued (campaign calls are queued by the CampaignRunner). */
  announceQueued(accountId: string): void {
    for (const listener of this.queuedListeners) listener(accountId);
  }

  /** Called with the account whenever a call is queued (the dispatcher places it when a slot is free). */
  onQueued(listener: (accountId: string) => void): void {
    this.queuedListeners.push(listener);
  }

  /** Called with the id of a queued or ringing call that `end` settled (a carrier still dialling it lets go). */
  onSettledBeforeAnswer(listener: (callId: string) => void): void {
    this.settledListeners.push(listener);
  }

  async get(accountId: string, id: string): Promise<CallRecord> {
    return findOwned(await this.calls.findById(id), accountId, NOT_FOUND);
  }

  list(accountId: string, filters: CallFilters, query: ListQuery) {
    return jsonListPage({
      codec: this.deps.cursors,
      list: "calls",
      filters: { ...filters },
      query,
      fetch: (page) => this.calls.page(accountId, filters, page),
      count: () => this.calls.count(accountId, filters),
    });
  }

  /** Lets `end` hang up calls with live media (set once the media gateway runs). */
  attachLiveControl(control: LiveCallControl): void {
    this.liveControl = control;
  }

  /**
   * Ends a call at the client's request. A call with live media in this process is hung up
   * for real (the media side stores its end, transcript and charge); so is one whose media
   * another node runs, while that node beats: it is sent the command and this waits for the
   * call's end (CallCommands). Otherwise the record is settled:
   * - `queued` (never placed) becomes `failed`: it never connected;
   * - `ringing` becomes `no_answer`: nobody picked up;
   * - `in_progress` becomes `completed`, its duration counted from `answered_at`, and billed.
   * A call that has already ended is 409 `call_already_ended`.
   */
  async end(accountId: string, id: string): Promise<CallRecord> {
    const found = await this.get(accountId, id);
    if (this.liveControl && (await this.liveControl.hangUp(id))) return (await this.calls.findById(id))!;
    if (await this.endsElsewhere(found)) return (await this.calls.findById(id))!;
    if (found.status === "in_progress") {
      const durationMs = found.answered_at === null ? 0 : Math.max(0, Date.now() - Date.parse(found.answered_at));
      const end = { status: "completed", durationMs, transcript: found.transcript ?? [], recordingPath: found.recording_path } as const;
      if (await this.deps.liveCalls.end(id, end)) return (await this.calls.findById(id))!;
    }
    // Read and write in one transaction so a status change by the engine cannot slip in between.
    const settled = await this.db.transaction().execute(async (trx) => {
      await this.calls.lockForChange(id, trx);
      const call = (await this.calls.findById(id, trx))!;
      if ((ENDED_CALL_STATUSES as readonly CallStatus[]).includes(call.status)) {
        throw new ApiError(409, "call_already_ended", `Call ${id} has already ended (${call.status})`);
      }
      const at = nowIso();
      const status: CallStatus = call.status === "queued" ? "failed" : "no_answer";
      const patch = { status, ended_at: at, updated_at: at };
      await this.calls.update(id, patch, trx);
      const ended = { ...call, ...patch };
      await this.deps.events.entered(ended, call.status, trx);
      // Settled before it was answered: what it held (a ringing call's first minute) is free with it.
      await this.deps.reservations.release(id, trx);
      return ended;
    });
    for (const listener of this.settledListeners) listener(id);
    return settled;
  }

  /**
   * Whether another node, alive, runs live call `call`: then it is asked to end it, and this
   * waits for the end (REMOTE_END_WAIT_MS at most; the answer is the call as it is then). The
   * record is never settled here meanwhile: the node that runs the call stores its end.
   */
  private async endsElsewhere(call: CallRecord): Promise<boolean> {
    const owner = call.node_id;
    if (!owner || owner === this.deps.nodeId || !(LIVE_CALL_STATUSES as readonly CallStatus[]).includes(call.status)) return false;
    if (!(await this.deps.commands.isAlive(owner, Date.now() - this.config.node.graceMs))) return false;
    await this.deps.commands.endRemotely(call.id, owner);
    return true;
  }

  /** The given from number must be one of the account's active numbers; by default its oldest active one. */
  private async fromNumber(accountId: string, given: string | undefined): Promise<string> {
    if (given !== undefined) {
      if (!(await this.numbers.findActive(accountId, given))) {
        throw ApiError.field(
          "invalid_from_number",
          "from_number",
          `${given} is not an active number of this account (a number registered with the API is pending until the operator approves it); GET /v1/phone-numbers lists them`,
        );
      }
      return given;
    }
    const oldest = await this.numbers.oldestActive(accountId);
    if (!oldest) {
      throw ApiError.field(
        "invalid_from_number",
        "from_number",
        "the account has no active phone number to call from; register one with POST /v1/phone-numbers and have the operator approve it (`parley admin number approve`), or have the operator add one (`parley admin number add`)",
      );
    }
    return oldest.phone_number;
  }
}
