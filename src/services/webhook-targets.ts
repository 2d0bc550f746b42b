import type { LookupFunction } from "node:net";
import { ApiError } from "../core/api-error.js";
import { FixedWindowRateLimiter, rateLimitExceeded } from "../core/fixed-window-rate-limiter.js";
import type { UrlReachabilityProbe } from "./url-reachability.js";
import { checkWebhookTarget, guardedLookup, literalRefusal, UNREACHABLE_MESSAGE, type WebhookNetworkPolicy } from "./webhook-network-policy.js";
import { parseWebhookUrl, type WebhookUrlPolicy } from "./webhook-url.js";

/** Reachability checks one account may make per minute (each opens a connection from this server). */
export const URL_CHECKS_PER_MINUTE = 10;

export interface WebhookTargetsConfig extends WebhookUrlPolicy {
  /** Check that a stored URL's host name resolves and (a webhook's) accepts connections (`url_unreachable`). */
  verifyReachable: boolean;
}

/**
 * Where webhook deliveries may go: the URL's form (https, or http to loopback when allowed),
 * its address (not into the service's own networks), and, for webhooks being saved, whether
 * it accepts connections at all. Every check refuses before connecting anywhere it may not.
 */
export class WebhookTargets {
  private readonly probes = new FixedWindowRateLimiter();
  /** Resolves and vets receivers' host names for connections: what it checked is what is connected to. */
  readonly lookup: LookupFunction;

  constructor(
    private readonly config: WebhookTargetsConfig,
    private readonly policy: WebhookNetworkPolicy,
    private readonly probe: UrlReachabilityProbe,
  ) {
    this.lookup = guardedLookup(policy);
  }

  /**
   * A URL about to be stored (on `field`): its form and address, then (for a webhook, when
   * configured) a connection to it, at most URL_CHECKS_PER_MINUTE per account. 400
   * `invalid_url` naming why, 400 `url_unreachable`, or 429 `rate_limit_exceeded`. With
   * verification off a host name is still resolved, to refuse one that resolves into the
   * service's networks, but one that does not resolve is stored (deliveries fail until it does).
   */
  async checkForStorage(accountId: string, raw: string, options: { field: string; probe: boolean }): Promise<URL> {
    const url = parseWebhookUrl(raw, this.config, options.field);
    await checkWebhookTarget(url, this.policy, options.field, { mustResolve: this.config.verifyReachable });
    if (!options.probe || !this.config.verifyReachable) return url;
    const decision = this.probes.hit(accountId, URL_CHECKS_PER_MINUTE);
    if (!decision.allowed) throw rateLimitExceeded(decision, "webhook URL checks");
    // One answer for every failure: which one it was would map the network behind the address.
    if (!(await this.probe.probe(url))) throw ApiError.field("url_unreachable", options.field, UNREACHABLE_MESSAGE);
    return url;
  }

  /** Before an attempt: the URL's form and a literal address (a name is checked as it is resolved, by `lookup`). Throws with the reason. */
  checkForAttempt(raw: string): URL {
    const url = parseWebhookUrl(raw, this.config);
    const refusal = literalRefusal(url, this.policy);
    if (refusal) throw new Error(`${refusal}, which webhooks may not reach`);
    return url;
  }
}
