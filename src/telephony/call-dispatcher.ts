import type { Logger } from "pino";
import type { CarrierChoice } from "./carrier-choice.js";
import type { EngineSlot } from "./engine-share.js";
import type { LiveCallStart } from "../services/live-calls.js";
import type { MediaGateway } from "./media-gateway.js";
import type { CallRecord } from "../db/repositories/calls.js";
import type { CallLifecycle } from "../services/call-lifecycle.js";
import type { Services } from "../services/container.js";

/**
 * Places queued outbound calls: whenever an account may have a free concurrent-call slot (a
 * call was created, a call ended, the process started), its oldest queued calls are claimed
 * (`ringing`) and dialled through the carrier. Answered calls run on the media gateway like
 * any call; the others end `busy`, `no_answer` or `failed`.
 */
export class CallDispatcher {
  /** One pass at a time per account, so claims and dials keep queue order. */
  private readonly passes = new Map<string, Promise<void>>();
  /** Calls being dialled, by call id: aborting one makes the carrier let go of the callee. */
  private readonly dialling = new Map<string, AbortController>();
  private stopped = false;

  constructor(
    private readonly services: Services,
    private readonly lifecycle: CallLifecycle,
    private readonly carriers: CarrierChoice,
    private readonly media: MediaGateway,
    private readonly logger: Logger,
  ) {
    // Any call's end may free an engine slot another account's queued call was waiting for.
    media.onCallEnded(() => void this.kickAll().catch((err: unknown) => this.logger.error({ err }, "placing queued calls failed")));
    services.calls.onSettledBeforeAnswer((callId) => this.dialling.get(callId)?.abort());
  }

  /** Starts calls for every account with queued calls (at start-up). */
  async kickAll(): Promise<void> {
    for (const accountId of await this.lifecycle.accountsWithQueuedCalls()) this.kick(accountId);
  }

  /** Starts the account's queued calls that fit under its limit. */
  kick(accountId: string): void {
    if (this.stopped) return;
    const previous = this.passes.get(accountId) ?? Promise.resolve();
    const pass = previous.then(() => this.fill(accountId)).catch((err: unknown) => this.logger.error({ err, account_id: accountId }, "placing queued calls failed"));
    this.passes.set(accountId, pass);
  }

  /** No new calls; calls still being dialled are abandoned. */
  stop(): void {
    this.stopped = true;
    for (const controller of this.dialling.values()) controller.abort();
  }

  /**
   * Claims and places the account's queued calls while it has a concurrent-call slot and an
   * engine slot (its fair share, see EngineShare). Without one, the calls wait queued until a
   * call ends somewhere.
   */
  private async fill(accountId: string): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const slot = await this.media.admit(accountId).catch(() => undefined);
      if (!slot) return;
      const call = await this.lifecycle.claimNext(accountId).catch((err: unknown) => {
        slot.release();
        throw err;
      });
      if (!call) return slot.release();
      void this.place(call, slot).catch((err: unknown) => this.logger.error({ err, call_id: call.id, account_id: call.account_id }, "outbound call failed"));
    }
  }

  /** Dials the call; an answered one runs on the media gateway, which gives the engine slot back at its end. */
  private async place(call: CallRecord, slot: EngineSlot): Promise<void> {
    let handedOver = false;
    try {
      handedOver = await this.dialAndRun(call, slot);
    } finally {
      if (!handedOver) slot.release();
    }
  }

  /** True once the call runs on the media gateway (which then owns the slot). */
  private async dialAndRun(call: CallRecord, slot: EngineSlot): Promise<boolean> {
    const carrier = await this.carriers.forCall(call);
    const carrierName = "missing" in carrier ? carrier.missing : carrier.name;
    const log = this.logger.child({ call_id: call.id, account_id: call.account_id, carrier: carrierName });
    const controller = new AbortController();
    this.dialling.set(call.id, controller);
    // While it rings, the greeting is rendered: the callee hears it as soon as they answer.
    const ringingAgent = await this.services.agents.get(call.account_id, call.agent_id).catch(() => undefined);
    if (ringingAgent) void this.media.prepareGreeting(call, ringingAgent, controller.signal);
    let result;
    try {
      result =
        "missing" in carrier
          ? { outcome: "failed" as const, reason: `the ${carrier.missing} carrier is not set up on this node (see docs/carriers.md)` }
          : await carrier.dial({ id: call.id, accountId: call.account_id, to: call.phone_number!, from: call.from_number, metadata: call.metadata }, controller.signal);
    } catch (err) {
      log.error({ err }, "dialling failed");
      result = { outcome: "failed" as const, reason: (err as Error).message };
    } finally {
      this.dialling.delete(call.id);
    }
    this.services.metrics.dialled(carrierName, result.outcome);
    if (result.outcome !== "answered") {
      await this.lifecycle.unanswered(call.id, result.outcome);
      log.info({ outcome: result.outcome, reason: result.reason }, "outbound call not answered");
      this.kick(call.account_id);
      return false;
    }
    if (this.stopped || !(await this.lifecycle.answered(call.id))) {
      // Ended meanwhile (POST /end) or shutting down: the callee is let go.
      result.transport.close("call ended before it connected");
      this.kick(call.account_id);
      return false;
    }
    const account = await this.services.accounts.find(call.account_id);
    const agent = await this.services.agents.get(call.account_id, call.agent_id).catch(() => undefined);
    if (!account || !agent) {
      result.transport.close("agent gone");
      await this.services.liveCalls.end(call.id, { status: "failed", durationMs: 0, transcript: [], recordingPath: null });
      this.kick(call.account_id);
      return false;
    }
    const setup: LiveCallStart = {
      account,
      agent,
      direction: "outbound",
      phoneNumber: call.phone_number,
      fromNumber: call.from_number,
      record: call.record,
      maxDuration: call.max_duration,
      metadata: call.metadata,
      context: call.context,
    };
    await this.media.runCall({ ...call, status: "in_progress" }, setup, result.transport, slot);
    return true;
  }
}
