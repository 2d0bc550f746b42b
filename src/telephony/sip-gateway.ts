import type { Logger } from "pino";
import { bindFailure, StartupError } from "../core/startup-error.js";
import { SipCallTransport, SipUserAgent, type IncomingCall } from "../../engine/index.js";
import type { Config } from "../config.js";
import { ApiError } from "../core/api-error.js";
import { LogThrottle } from "../core/log-throttle.js";
import { callerNumber, dialledNumber } from "../core/phone-number.js";
import type { Services } from "../services/container.js";
import { MAX_CALL_DURATION_SECONDS } from "../services/call-limits.js";
import type { LiveCallStart } from "../services/live-calls.js";
import type { MediaGateway } from "./media-gateway.js";
import type { SipAccess } from "./sip-access.js";

/**
 * Inbound SIP calls: a SIP user agent on `PARLEY_SIP_PORT` answers INVITEs to the accounts'
 * active numbers with the number's default agent and runs them like any media call (recorded,
 * billed at the end). Refusals: a source outside `PARLEY_SIP_ALLOW` 403 (statelessly, by the
 * user agent, before anything is kept for it; logged at most once a minute), an unknown number
 * 404, a number without a default agent (or an inactive one) 480, an account at its
 * concurrent-call limit or engine share 486, without credits 402, while shutting down, past
 * `PARLEY_SIP_MAX_CALLS` or with the box at its call capacity (`PARLEY_CALL_CAPACITY`) 503, the last
 * two with `Retry-After`.
 */
export class SipGateway {
  private accepting = true;

  private constructor(
    private readonly ua: SipUserAgent,
    private readonly logger: Logger,
  ) {}

  static async start(config: Config["sip"], access: SipAccess, services: Services, media: MediaGateway, logger: Logger): Promise<SipGateway> {
    const { allowed, rtpPortRange } = access;
    const log = logger.child({ component: "sip" });
    const refusals = new LogThrottle(REFUSAL_LOG_INTERVAL_MS);
    let gateway: SipGateway | undefined;
    const ua = await SipUserAgent.start({
      host: config.host,
      port: config.port,
      publicAddress: config.publicIp || undefined,
      rtpPortRange,
      rtpTimeoutMs: config.rtpTimeoutMs,
      maxCalls: config.maxCalls,
      maxTransactions: config.maxTransactions,
      acceptsSource: ({ address }) => {
        if (allowed(address)) return true;
        const heldBack = refusals.take();
        if (heldBack !== undefined) log.warn({ source: address, held_back: heldBack }, "SIP request from a source outside PARLEY_SIP_ALLOW refused (403); logged at most once a minute");
        return false;
      },
      onInvite: (incoming) => void gateway?.accept(incoming, services, media).catch((err: unknown) => log.error({ err }, "inbound SIP call failed")),
    }).catch((err: unknown) => {
      throw new StartupError(`SIP cannot listen on ${config.host}:${config.port} (UDP): ${bindFailure(err)}. Set PARLEY_SIP_PORT to a free port, or to 0 to turn SIP off`);
    });
    gateway = new SipGateway(ua, log);
    log.info({ port: ua.port }, "SIP listening");
    return gateway;
  }

  get port(): number {
    return this.ua.port;
  }

  /** The user agent, for outbound calls through the trunk. */
  get userAgent(): SipUserAgent {
    return this.ua;
  }

  /** New INVITEs get 503 from now on; live calls go on (their BYEs still need the socket). */
  stopAccepting(): void {
    this.accepting = false;
  }

  async close(): Promise<void> {
    await this.ua.close();
  }

  private async accept(incoming: IncomingCall, services: Services, media: MediaGateway): Promise<void> {
    if (!this.accepting) return incoming.reject(503, "Service Unavailable");
    const dialled = dialledNumber(incoming.to);
    const number = dialled ? await services.phoneNumbers.findActiveAnywhere(dialled) : undefined;
    if (!dialled || !number) return incoming.reject(404, "Not Found");
    const account = await services.accounts.find(number.account_id);
    const agent = number.default_agent_id ? await services.agents.get(number.account_id, number.default_agent_id).catch(() => undefined) : undefined;
    if (!account || !agent || agent.status !== "active") return incoming.reject(480, "Temporarily Unavailable");
    const setup: LiveCallStart = {
      account,
      agent,
      direction: "inbound",
      phoneNumber: dialled,
      fromNumber: callerNumber(incoming.from),
      record: true,
      maxDuration: MAX_CALL_DURATION_SECONDS,
      metadata: { sip_call_id: incoming.callId },
      context: {},
    };
    let slot;
    let call;
    try {
      slot = await media.admit(account.id);
      call = await services.liveCalls.begin(setup).catch((err: unknown) => {
        slot!.release();
        throw err;
      });
    } catch (err) {
      const [status, reason] = refusalOf(err);
      // A limit that frees up says when to try again (the caller's proxy may retry elsewhere meanwhile).
      const retryAfter = err instanceof ApiError ? err.headers?.["Retry-After"] : undefined;
      return incoming.reject(status, reason, retryAfter ? [["Retry-After", retryAfter]] : []);
    }
    let sipCall;
    try {
      sipCall = await incoming.answer({ ring: true });
    } catch (err) {
      // Cancelled or never acknowledged: the call never connected.
      await services.liveCalls.end(call.id, { status: "failed", durationMs: 0, transcript: [], recordingPath: null }).finally(() => slot.release());
      this.logger.info({ call_id: call.id, account_id: call.account_id, reason: (err as Error).message }, "inbound SIP call not connected");
      return;
    }
    await media.runCall(call, setup, new SipCallTransport(sipCall), slot);
  }
}

/** Refused sources are logged at most this often: a flood must not fill the disk. */
const REFUSAL_LOG_INTERVAL_MS = 60_000;

function refusalOf(err: unknown): [number, string] {
  const code = err instanceof ApiError ? err.code : "";
  if (code === "insufficient_credits") return [402, "Payment Required"];
  if (code === "agent_inactive") return [480, "Temporarily Unavailable"];
  if (code === "rate_limit_exceeded") return [486, "Busy Here"];
  if (code === "engine_at_capacity") return [503, "Service Unavailable"];
  return [500, "Server Internal Error"];
}
