import { answerChallenge, type DigestCredentials } from "./digest-auth.js";
import { unmapIpv4 } from "./ip-address.js";
import type { SipRequest, SipResponse } from "./sip-message.js";
import type { SipAddress } from "./transaction.js";

/** The trunk as our INVITE reached it: its host as written (a name or an address) and the address that resolved to. */
export interface TrunkAddress {
  host: string;
  address: string;
}

/**
 * Digest credentials that answer the trunk and nobody else. A challenge gets an answer only when
 * the challenged request went to the trunk's host and the challenge came back from the trunk's
 * address, from the port the request went to (and, with `credentials.realm`, names that realm).
 * Anyone else who challenges us (a callee reached directly in the dialog, a stranger who saw
 * one of our requests) would otherwise get a digest of the trunk password to crack offline or
 * to replay.
 */
export class TrunkCredentials {
  constructor(
    readonly credentials: DigestCredentials,
    private readonly trunk: TrunkAddress,
  ) {}

  /** The Authorization (or Proxy-Authorization) answering `response`, a 401/407 to `request`, which we sent to `sentTo`; undefined when not ours to answer. */
  answer(response: SipResponse, request: SipRequest, sentTo: SipAddress, from: SipAddress): [string, string] | undefined {
    const toTrunk = sentTo.address.toLowerCase() === this.trunk.host.toLowerCase() || unmapIpv4(sentTo.address) === this.trunk.address;
    const fromTrunk = unmapIpv4(from.address) === this.trunk.address && from.port === sentTo.port;
    return toTrunk && fromTrunk ? answerChallenge(response, request, this.credentials) : undefined;
  }
}
