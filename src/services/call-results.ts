import PQueue from "p-queue";
import type { Logger } from "pino";
import { analyzeByRules, type AnalysisInput, type CallAction, type CallAnalyzer, type CallEndReason } from "../../engine/index.js";
import { nowIso } from "../core/time.js";
import { knownZone } from "../core/zoned-time.js";
import type { Db } from "../db/database.js";
import { AgentsRepository, type AgentRecord } from "../db/repositories/agents.js";
import { AppointmentsRepository } from "../db/repositories/appointments.js";
import { CallsRepository, type CallRecord } from "../db/repositories/calls.js";
import type { CallEvents } from "./call-events.js";
import type { DoNotCallService } from "./do-not-call.js";

/** Model analyses written at once, at most (each is one request to the chat service). */
const ANALYSIS_CONCURRENCY = 8;

/**
 * What a connected call's end produces besides its status: its analysis. When the call ends,
 * the deterministic analysis is stored with the end, in its transaction. With a chat model
 * configured, the call is also marked `analysis_pending`: its end events wait (see
 * CallEvents) while the model writes the analysis, bounded by the analyzer's timeout; then the
 * model's analysis (or the deterministic one, marked `rules_fallback`) is stored with the
 * events in one transaction. A crash in between leaves the mark, and the next start finishes
 * the analysis (`recoverPending`): no call.completed is lost.
 */
export class CallResults {
  private readonly calls: CallsRepository;
  private readonly agents: AgentsRepository;
  private readonly appointments: AppointmentsRepository;
  private readonly queue = new PQueue({ concurrency: ANALYSIS_CONCURRENCY });
  /** Aborted when the service stops: analyses under way are left pending for the next start. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly deps: { analyzer: CallAnalyzer; events: CallEvents; doNotCall: DoNotCallService; logger: Logger },
  ) {
    this.calls = new CallsRepository(db);
    this.agents = new AgentsRepository(db);
    this.appointments = new AppointmentsRepository(db);
  }

  /**
   * The analysis fields of `call` ending now (as it will be stored, status and transcript
   * set), read inside the end's transaction. `actions` are the agent's actions as the engine
   * reported them; without them (a call closed from its record: after a crash, or ended
   * through the API while no media ran here) they are rebuilt from what was stored during the
   * call: its bookings and its callee's do-not-call request.
   */
  async atEnd(call: CallRecord, actions: readonly CallAction[] | null, trx: Db): Promise<Pick<CallRecord, "actions" | "analysis" | "outcome" | "analysis_pending">> {
    const known = actions ?? (await this.storedActions(call.id, trx));
    const agent = await this.agents.findAnyById(call.agent_id, trx);
    const analysis = analyzeByRules(analysisInput({ ...call, actions: [...known] }, agent));
    return { actions: [...known], analysis, outcome: analysis.outcome, analysis_pending: this.deps.analyzer.usesModel };
  }

  /**
   * Has the model write the analysis of a call left pending by its end (in the background;
   * see `idle`). The model's time counts from the call's end, waiting for a turn included, so
   * the end events come at most the analyzer's timeout after it; a call left pending by a
   * previous process (`fresh`) gets the whole time again.
   */
  finishLater(callId: string, fresh = false): void {
    void this.queue.add(() => this.finish(callId, fresh));
  }

  /** At start-up: finishes the analyses a previous process left pending. Returns how many were waiting. */
  async recoverPending(): Promise<number> {
    const pending = await this.db.selectFrom("calls").select("id").where("analysis_pending", "=", 1).execute();
    for (const { id } of pending) this.finishLater(id, true);
    return pending.length;
  }

  /** Resolves once no analysis is under way or waiting. */
  idle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** Stops: analyses under way are abandoned (their calls stay pending for the next start). */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.queue.clear();
    await this.queue.onIdle();
  }

  private async finish(callId: string, fresh: boolean): Promise<void> {
    if (this.stopping.signal.aborted) return;
    try {
      const call = await this.calls.findById(callId);
      if (!call?.analysis_pending) return;
      const agent = await this.agents.findAnyById(call.agent_id);
      const waited = Date.now() - Date.parse(call.ended_at ?? call.updated_at);
      const withinMs = fresh ? this.deps.analyzer.timeoutMs : this.deps.analyzer.timeoutMs - waited;
      const analysis = await this.deps.analyzer.analyze(analysisInput(call, agent), agent?.model ?? "llm-large", { signal: this.stopping.signal, withinMs });
      if (this.stopping.signal.aborted) return;
      if (analysis.source === "rules_fallback") this.deps.logger.warn({ call_id: callId, reason: analysis.fallback_reason }, "model analysis failed: the deterministic analysis stands in");
      await this.db.transaction().execute(async (trx) => {
        const patch = { analysis, outcome: analysis.outcome, analysis_pending: false, updated_at: nowIso() };
        // Only the holder of the mark writes the events: a second process finishing the same call finds it gone.
        const claimed = await trx.updateTable("calls").set({ analysis_pending: 0 }).where("id", "=", callId).where("analysis_pending", "=", 1).executeTakeFirst();
        if (claimed.numUpdatedRows === 0n) return;
        await this.calls.update(callId, patch, trx);
        await this.deps.events.analysed({ ...call, ...patch }, trx);
      });
    } catch (err) {
      // The mark stays: the next start tries again.
      this.deps.logger.error({ err, call_id: callId }, "call analysis not stored; it is tried again at the next start");
    }
  }

  /** The actions a call's stored records show: each appointment it booked, and a do-not-call request made on it. */
  private async storedActions(callId: string, trx: Db): Promise<CallAction[]> {
    const actions: CallAction[] = (await this.appointments.ofCall(callId, trx)).map((a) => ({
      type: "tool_call",
      name: "book_appointment",
      arguments: { customer_name: a.customer_name, date: a.date, time: a.time, service: a.service, customer_email: a.customer_email },
      result: { ok: true, data: { status: "booked", appointment_id: a.id, date: a.date, time: a.time } },
    }));
    if (await this.deps.doNotCall.askedOnCall(callId, trx)) actions.push({ type: "tool_call", name: "do_not_call", arguments: {}, result: { ok: true, data: { status: "listed" } } });
    return actions;
  }
}

/** What the analysis reads of a call and its agent (the agent as it is now; a deleted agent's fields still count). */
function analysisInput(call: CallRecord, agent: AgentRecord | undefined): AnalysisInput {
  return {
    transcript: call.transcript ?? [],
    actions: call.actions ?? [],
    endReason: call.end_reason as CallEndReason | null,
    transferred: call.status === "transferred",
    durationSeconds: call.duration ?? 0,
    direction: call.direction,
    farEndNumber: call.direction === "outbound" ? call.phone_number : call.direction === "inbound" ? call.from_number : null,
    agentName: agent?.name ?? "the agent",
    fields: agent?.analysis_fields ?? [],
    startedAt: new Date(call.answered_at ?? call.created_at),
    timeZone: knownZone(agent?.metadata.timezone) ?? "UTC",
  };
}
