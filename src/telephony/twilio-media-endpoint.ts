import type { WebSocket } from "ws";
import { TwilioTransport } from "../../engine/index.js";
import type { AccountRecord } from "../db/repositories/accounts.js";
import type { AgentRecord } from "../db/repositories/agents.js";
import type { Services } from "../services/container.js";
import type { LiveCallStart } from "../services/live-calls.js";
import type { Logger } from "pino";
import { withCarrierControl } from "./carrier-call-control.js";
import { CarrierMediaEndpoint, type CarrierEndpointDeps, type CarrierStreamStart } from "./carrier-media-endpoint.js";
import { parseContext, parseMaxDuration } from "./media-call-parameters.js";
import type { LiveCallRunner } from "./media-endpoint.js";
import { CLOSE_POLICY_VIOLATION } from "./refusal-close-code.js";
import { checkTwilioStart, type TwilioStreamStart } from "./twilio-start.js";

/** Largest message accepted: Twilio's are small JSON (a `media` message is about 300 bytes; `start` carries the bounded custom parameters). */
const TWILIO_MAX_MESSAGE_BYTES = 16 * 1024;

/** A Twilio stream whose call may be controlled through Twilio's API (see withCarrierControl). */
class ControlledTwilioTransport extends withCarrierControl(TwilioTransport) {}

type TwilioStart = TwilioStreamStart & CarrierStreamStart;

/**
 * `/media/twilio`, Twilio Media Streams. The stream authenticates in its `start` message: either
 * a single-use stream token (`customParameters.stream_token`) that Parley wrote into the TwiML it
 * answered Twilio with (its voice webhook, or a call it placed; see CarrierMediaEndpoint), or
 * the account's media token (`token`) in TwiML written by hand.
 */
export class TwilioMediaEndpoint extends CarrierMediaEndpoint<ControlledTwilioTransport, TwilioStart> {
  readonly path = "/media/twilio";
  protected readonly carrier = "twilio";

  constructor(services: Services, runner: LiveCallRunner, logger: Logger, carriers: CarrierEndpointDeps) {
    super(services, runner, logger, carriers, TWILIO_MAX_MESSAGE_BYTES);
  }

  protected transportFor(ws: WebSocket): ControlledTwilioTransport {
    return new ControlledTwilioTransport(ws);
  }

  protected async started(transport: ControlledTwilioTransport): Promise<TwilioStart> {
    const start = checkTwilioStart(await transport.waitForStart());
    return { ...start, carrierCallId: start.callSid, streamToken: start.parameters.stream_token, metadata: { twilio_call_sid: start.callSid, twilio_stream_sid: start.streamSid } };
  }

  /** TwiML written by hand: the account's media token, and the agent named or the dialled number's. */
  protected override async acceptWithoutToken(ws: WebSocket, transport: ControlledTwilioTransport, start: TwilioStart, authenticated: () => void): Promise<void> {
    const params = start.parameters;
    const account = await this.services.accounts.findByMediaToken(params.token ?? "");
    if (!account) {
      ws.close(CLOSE_POLICY_VIOLATION, "missing or invalid media token");
      return;
    }
    authenticated();
    const agent = await this.route(account, params.agent_id ?? null, start.to);
    if (!agent) {
      ws.close(CLOSE_POLICY_VIOLATION, start.to ? `no agent answers ${start.to}` : "agent_id or To is required");
      return;
    }
    const slot = await this.runner.admit(account.id);
    const setup: LiveCallStart = {
      account,
      agent,
      direction: start.to ? "inbound" : "web",
      phoneNumber: start.to,
      fromNumber: start.from,
      record: params.record !== "false",
      maxDuration: parseMaxDuration(params.max_duration ?? null),
      metadata: start.metadata,
      context: parseContext(params.context ?? null),
    };
    const call = await this.services.liveCalls.begin(setup).catch((err: unknown) => {
      slot.release();
      throw err;
    });
    await this.runner.runCall(call, setup, transport, slot);
  }

  /** The agent for a stream: the one named, or the dialled number's default agent. */
  private async route(account: AccountRecord, agentId: string | null, to: string | null): Promise<AgentRecord | undefined> {
    if (agentId) return this.services.agents.get(account.id, agentId).catch(() => undefined);
    if (!to) return undefined;
    const number = await this.services.phoneNumbers.findActiveByNumber(account.id, to);
    if (!number?.default_agent_id) return undefined;
    return this.services.agents.get(account.id, number.default_agent_id).catch(() => undefined);
  }
}
