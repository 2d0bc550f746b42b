import { SipCallError, SipCallTransport, type DigestCredentials, type SipUserAgent } from "../../engine/index.js";
import { ConfigError } from "../config.js";
import type { Carrier, DialResult } from "./carrier.js";

/**
 * Outbound calls through a SIP trunk (`PARLEY_CARRIER=sip`, `PARLEY_SIP_TRUNK=host:port`):
 * INVITE `sip:<number>@<trunk>` from the SIP user agent; 2xx connects the call; 486/600 is
 * busy; ringing past `PARLEY_SIP_RING_TIMEOUT_MS` is cancelled as no answer (as are 408,
 * 480 and 487); any other failure is failed. With `credentials` (PARLEY_SIP_TRUNK_USER,
 * _PASSWORD and optionally _REALM), the trunk's Digest challenges (401/407) are answered, and
 * only the trunk's: see the engine's TrunkCredentials.
 */
export class SipTrunkCarrier implements Carrier {
  readonly name = "sip";
  private readonly trunk: { address: string; port: number };

  constructor(
    private readonly ua: SipUserAgent,
    trunk: string,
    private readonly ringTimeoutMs: number,
    private readonly credentials?: DigestCredentials,
  ) {
    const match = /^(?:sip:)?([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(trunk.trim());
    if (!match) throw new ConfigError("PARLEY_SIP_TRUNK", `must be host[:port] of the SIP trunk, got "${trunk}"`);
    this.trunk = { address: match[1]!, port: Number(match[2] ?? 5060) };
  }

  async dial(call: { to: string; from: string | null }, signal: AbortSignal): Promise<DialResult> {
    const { address, port } = this.trunk;
    const outgoing = this.ua.invite({
      to: `sip:${call.to}@${address}:${port}`,
      ...(call.from ? { from: call.from } : {}),
      target: { address, port },
      timeoutMs: this.ringTimeoutMs,
      ...(this.credentials ? { credentials: this.credentials } : {}),
    });
    const abandon = () => outgoing.cancel();
    signal.addEventListener("abort", abandon);
    try {
      return { outcome: "answered", transport: new SipCallTransport(await outgoing.result) };
    } catch (err) {
      if (!(err instanceof SipCallError)) return { outcome: "failed", reason: (err as Error).message };
      const outcome = err.outcome === "busy" ? "busy" : ["no_answer", "cancelled", "timeout"].includes(err.outcome) ? "no_answer" : "failed";
      return { outcome, reason: `${err.status} ${err.message}` };
    } finally {
      signal.removeEventListener("abort", abandon);
    }
  }
}
