import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { ApiError } from "../core/api-error.js";
import { inNetwork, ipBytes, ipv4Text, parseIpNetwork, parseIpNetworkList, type IpBytes, type IpNetwork } from "../core/ip-networks.js";

/** Resolves a host name to every address it has. */
export type HostResolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** Which addresses webhook deliveries (and the URL check) may connect to. */
export interface WebhookNetworkPolicy {
  /** Loopback addresses are allowed (PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP: development and tests). */
  allowLoopback: boolean;
  /** Networks allowed whatever their kind (PARLEY_WEBHOOK_ALLOW_NETWORKS: receivers on the LAN). */
  allowNetworks: readonly IpNetwork[];
  /** How host names are resolved (the system's resolver unless a test gives another). */
  resolve?: HostResolver;
}

/** The code of the error a refused connection fails with. */
export const REFUSED_ADDRESS = "EWEBHOOKADDRESS";

const net = (cidr: string, kind: string) => ({ network: parseIpNetwork(cidr)!, kind });

const LOOPBACK = "a loopback address";
/** Networks that are not the public internet: the service's own host, its LAN, its cloud's metadata service. */
const REFUSED_NETWORKS = [
  net("127.0.0.0/8", LOOPBACK),
  net("::1/128", LOOPBACK),
  net("0.0.0.0/8", "an unspecified ('this network') address"),
  net("::/128", "an unspecified address"),
  net("::/96", "a deprecated IPv4-compatible address"),
  net("10.0.0.0/8", "a private address (RFC 1918)"),
  net("172.16.0.0/12", "a private address (RFC 1918)"),
  net("192.168.0.0/16", "a private address (RFC 1918)"),
  net("fc00::/7", "a private (unique local) address"),
  net("fec0::/10", "a site-local address"),
  net("100.64.0.0/10", "a carrier-grade NAT (shared) address"),
  net("169.254.0.0/16", "a link-local address (cloud metadata services live here)"),
  net("fe80::/10", "a link-local address"),
  net("224.0.0.0/4", "a multicast address"),
  net("ff00::/8", "a multicast address"),
  net("240.0.0.0/4", "a reserved address"),
  net("192.0.0.0/24", "a reserved address"),
  net("198.18.0.0/15", "a reserved (benchmarking) address"),
  net("192.0.2.0/24", "a documentation address"),
  net("198.51.100.0/24", "a documentation address"),
  net("203.0.113.0/24", "a documentation address"),
  net("2001:db8::/32", "a documentation address"),
  net("100::/64", "a discard-only address"),
];

/** IPv6 forms that carry an IPv4 address, judged by the IPv4 inside: where the packet really goes. */
const EMBEDDING_IPV4 = [
  { network: parseIpNetwork("::ffff:0:0/96")!, at: 12 }, // IPv4-mapped
  { network: parseIpNetwork("64:ff9b::/96")!, at: 12 }, // NAT64
  { network: parseIpNetwork("2002::/16")!, at: 2 }, // 6to4
];

function embeddedIpv4(bytes: IpBytes): IpBytes | undefined {
  if (bytes.length !== 16) return undefined;
  const form = EMBEDDING_IPV4.find((f) => inNetwork(bytes, f.network));
  return form ? bytes.subarray(form.at, form.at + 4) : undefined;
}

/**
 * Why a webhook may not connect to `address`, or undefined when it may. An address in one of
 * the allowed networks may, whatever its kind; loopback may when the policy allows it.
 */
export function addressRefusal(address: string, policy: WebhookNetworkPolicy): string | undefined {
  const bytes = ipBytes(address);
  if (!bytes) return `${address} is not an IP address`;
  const inner = embeddedIpv4(bytes);
  const judged = inner ?? bytes;
  const allowed = (b: IpBytes) => policy.allowNetworks.some((n) => inNetwork(b, n));
  if (allowed(bytes) || (inner && allowed(inner))) return undefined;
  const refused = REFUSED_NETWORKS.find((r) => inNetwork(judged, r.network)) ?? (judged !== bytes ? REFUSED_NETWORKS.find((r) => inNetwork(bytes, r.network)) : undefined);
  if (!refused) return undefined;
  if (refused.kind === LOOPBACK && policy.allowLoopback) return undefined;
  const shown = judged !== bytes ? `${address} (${ipv4Text(judged)})` : address;
  return `${shown} is ${refused.kind}`;
}

const systemResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Settings that lift a refusal, for the messages. */
const HOW_TO_ALLOW = "set PARLEY_WEBHOOK_ALLOW_NETWORKS to allow a receiver on your own network";

function refusedError(reason: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${reason}; ${HOW_TO_ALLOW}`), { code: REFUSED_ADDRESS });
}

/**
 * A `lookup` for net/tls/undici connections: resolves the name, refuses the connection when
 * any of its addresses is refused, and otherwise hands back the checked addresses, so the
 * connection goes to exactly what was checked (a second resolution, DNS rebinding, cannot
 * slip a private address in). Refusing on any refused address, not only the one used, keeps
 * a name from mixing a public address with an internal one.
 */
export function guardedLookup(policy: WebhookNetworkPolicy): LookupFunction {
  const resolve = policy.resolve ?? systemResolver;
  return ((hostname: string, options: { all?: boolean; family?: number | string }, callback: (...args: unknown[]) => void) => {
    resolve(hostname).then(
      (found) => {
        const refusal = found.map((a) => addressRefusal(a.address, policy)).find((r) => r !== undefined);
        if (refusal) return callback(refusedError(`${hostname} resolves to an address webhooks may not reach: ${refusal}`));
        const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : Number(options.family ?? 0);
        const usable = family ? found.filter((a) => a.family === family) : found;
        if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }));
        if (options.all) return callback(null, usable);
        return callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as unknown as LookupFunction;
}

/**
 * The URL's host, checked before anything connects: an IP literal directly (connections to a
 * literal never ask `lookup`), a name by resolving it. Throws 400 `invalid_url` naming why
 * (on `field`) when it is refused or does not resolve.
 */
export async function checkWebhookTarget(url: URL, policy: WebhookNetworkPolicy, field = "url"): Promise<void> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (ipBytes(host)) {
    const refusal = addressRefusal(host, policy);
    if (refusal) throw ApiError.field("invalid_url", field, `must not point into the service's own network: ${refusal}; ${HOW_TO_ALLOW}`);
    return;
  }
  let found: Awaited<ReturnType<HostResolver>>;
  try {
    found = await (policy.resolve ?? systemResolver)(host);
  } catch {
    throw ApiError.field("invalid_url", field, `the host name ${host} does not resolve`);
  }
  const refusal = found.map((a) => addressRefusal(a.address, policy)).find((r) => r !== undefined);
  if (refusal) {
    throw ApiError.field("invalid_url", field, `must not point into the service's own network: ${host} resolves to an address it may not reach (${refusal}); ${HOW_TO_ALLOW}`);
  }
}

/** The literal-address half of `checkWebhookTarget`, for every attempt (names are checked by `guardedLookup`). */
export function literalRefusal(url: URL, policy: WebhookNetworkPolicy): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return ipBytes(host) ? addressRefusal(host, policy) : undefined;
}

/** The policy the configuration sets (its networks checked at start-up). */
export function webhookNetworkPolicy(settings: { allowLoopbackHttp: boolean; allowNetworks: string }, resolve?: HostResolver): WebhookNetworkPolicy {
  const parsed = parseIpNetworkList(settings.allowNetworks);
  if ("bad" in parsed) throw new Error(`PARLEY_WEBHOOK_ALLOW_NETWORKS: "${parsed.bad}" is not an IP address or CIDR`);
  return { allowLoopback: settings.allowLoopbackHttp, allowNetworks: parsed.networks, ...(resolve ? { resolve } : {}) };
}
