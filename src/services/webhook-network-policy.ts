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

/** Where an IPv6 form keeps an IPv4 address: its bytes' positions, and a label for messages when the form has several. */
interface Placement {
  at: readonly number[];
  label?: string;
}

/**
 * IPv6 forms that carry an IPv4 address, judged by the IPv4 inside: where the packet really
 * goes once a translator (or the kernel) takes it out.
 *
 * RFC 8215's local-use NAT64 prefix 64:ff9b:1::/48 is a block an operator carves its own
 * translator prefix from, of any RFC 6052 length inside it (/48, /56, /64, /96), and each length
 * puts the IPv4 at other bytes (skipping byte 8, RFC 6052's "u" octet). This service cannot know
 * which length the translator on its network uses, so it reads every placement and refuses the
 * address when any of them is refused: an attacker needs only the placement the operator's
 * translator uses. An address made for one length has zeros where the others look (RFC 6052
 * zero-fills the rest), which reads as 0.0.0.0/8, refused: so in practice nearly every address of
 * that prefix is refused, unless the operator allows the prefix (PARLEY_WEBHOOK_ALLOW_NETWORKS).
 */
const EMBEDDING_IPV4: ReadonlyArray<{ network: IpNetwork; placements: readonly Placement[] }> = [
  { network: parseIpNetwork("::ffff:0:0/96")!, placements: [{ at: [12, 13, 14, 15] }] }, // IPv4-mapped
  { network: parseIpNetwork("::ffff:0:0:0/96")!, placements: [{ at: [12, 13, 14, 15] }] }, // IPv4-translated (RFC 2765, SIIT)
  { network: parseIpNetwork("64:ff9b::/96")!, placements: [{ at: [12, 13, 14, 15] }] }, // NAT64, well-known prefix (RFC 6052: /96 only)
  {
    network: parseIpNetwork("64:ff9b:1::/48")!, // NAT64, local-use prefix (RFC 8215)
    placements: [
      // The likeliest length first, as the message names the first refused reading.
      { at: [12, 13, 14, 15], label: "with a /96 NAT64 prefix" },
      { at: [9, 10, 11, 12], label: "with a /64 NAT64 prefix" },
      { at: [7, 9, 10, 11], label: "with a /56 NAT64 prefix" },
      { at: [6, 7, 9, 10], label: "with a /48 NAT64 prefix" },
    ],
  },
  { network: parseIpNetwork("2002::/16")!, placements: [{ at: [2, 3, 4, 5] }] }, // 6to4
];

/** The IPv4 addresses an IPv6 address may carry (none for an IPv4 address or a plain IPv6 one). */
function carriedIpv4(bytes: IpBytes): Array<{ ipv4: IpBytes; label?: string }> {
  if (bytes.length !== 16) return [];
  const form = EMBEDDING_IPV4.find((f) => inNetwork(bytes, f.network));
  return (form?.placements ?? []).map((p) => ({ ipv4: Uint8Array.from(p.at, (i) => bytes[i]!), ...(p.label ? { label: p.label } : {}) }));
}

/** The kind of refused network `bytes` lies in, or undefined (loopback counts as allowed when the policy says so). */
function refusedKind(bytes: IpBytes, policy: WebhookNetworkPolicy): string | undefined {
  const refused = REFUSED_NETWORKS.find((r) => inNetwork(bytes, r.network));
  if (!refused || (refused.kind === LOOPBACK && policy.allowLoopback)) return undefined;
  return refused.kind;
}

/**
 * Why a webhook may not connect to `address`, or undefined when it may. An address in one of
 * the allowed networks may, whatever its kind; loopback may when the policy allows it. An IPv6
 * form carrying an IPv4 address is judged by every IPv4 address it may carry.
 */
export function addressRefusal(address: string, policy: WebhookNetworkPolicy): string | undefined {
  const bytes = ipBytes(address);
  if (!bytes) return `${address} is not an IP address`;
  const allowed = (b: IpBytes) => policy.allowNetworks.some((n) => inNetwork(b, n));
  if (allowed(bytes)) return undefined;
  for (const { ipv4, label } of carriedIpv4(bytes)) {
    const kind = allowed(ipv4) ? undefined : refusedKind(ipv4, policy);
    if (kind) return `${address} (${ipv4Text(ipv4)}${label ? `, read ${label}` : ""}) is ${kind}`;
  }
  const kind = refusedKind(bytes, policy);
  return kind ? `${address} is ${kind}` : undefined;
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

/** The one answer for a receiver that cannot be reached, whatever the reason (see `checkWebhookTarget`). */
export const UNREACHABLE_MESSAGE = "cannot be reached from this server";

/**
 * The URL's host, checked before anything connects: an IP literal directly (connections to a
 * literal never ask `lookup`), a name by resolving it. Throws 400 `invalid_url` (on `field`)
 * when an address is refused, naming why for a literal (the client wrote it), not for a name.
 * A name that does not resolve (or resolves to nothing) is 400 `url_unreachable` when
 * `mustResolve`, with the same bare message as a failed connection: which names this server's
 * DNS knows (a split-horizon or cluster DNS) describes the network it sits in. Without
 * `mustResolve` it passes: each delivery attempt's `guardedLookup` judges whatever it resolves
 * to then.
 */
export async function checkWebhookTarget(url: URL, policy: WebhookNetworkPolicy, field = "url", options: { mustResolve: boolean } = { mustResolve: true }): Promise<void> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (ipBytes(host)) {
    const refusal = addressRefusal(host, policy);
    if (refusal) throw ApiError.field("invalid_url", field, `must not point into the service's own network: ${refusal}; ${HOW_TO_ALLOW}`);
    return;
  }
  let found: Awaited<ReturnType<HostResolver>> = [];
  try {
    found = await (policy.resolve ?? systemResolver)(host);
  } catch {
    // handled below, as an empty answer
  }
  if (found.length === 0) {
    if (options.mustResolve) throw ApiError.field("url_unreachable", field, UNREACHABLE_MESSAGE);
    return;
  }
  // The answer does not say which address, nor its kind: that would tell any key what this
  // server's DNS gives for internal names (a map of the network it sits in).
  if (found.some((a) => addressRefusal(a.address, policy) !== undefined)) {
    throw ApiError.field("invalid_url", field, `must not point into the service's own network: ${host} resolves to an address it may not reach; ${HOW_TO_ALLOW}`);
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
