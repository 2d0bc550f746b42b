import { randomBytes, randomInt } from "node:crypto";
import { SipHeaders } from "./sip-headers.js";
import { DEFAULT_SIP_PORT, formatNameAddress, parseNameAddress, type NameAddress } from "./sip-header-values.js";
import { getCallId, getContactUri, getCSeq, getFrom, getTo, type SipRequest, type SipResponse } from "./sip-message.js";
import { SipParseError } from "./sip-parse-error.js";
import { formatSipUri, type SipUri } from "./sip-uri.js";
import { createBranch } from "./transaction-layer.js";
import type { SipAddress } from "./transaction.js";

/** How this UA writes itself into requests: the Via sent-by and the Contact URI. */
export interface LocalEndpoint {
  /** Address written into Via and Contact (the public one when behind NAT). */
  address: string;
  port: number;
  /** The Contact header value, e.g. `<sip:parley@192.0.2.1:5060>`. */
  contact: string;
}

/** A random tag for From/To (RFC 3261 19.3: at least 32 bits of randomness). */
export function createTag(): string {
  return randomBytes(8).toString("hex");
}

export function createCallId(host: string): string {
  return `${randomBytes(12).toString("hex")}@${host}`;
}

/** A fresh top Via for a request we send: a new branch, and `rport` so replies follow NATs (RFC 3581). */
export function viaFor(local: LocalEndpoint): string {
  return `SIP/2.0/UDP ${local.address}:${local.port};branch=${createBranch()};rport`;
}

/** Where a request to `uri` goes over UDP (no DNS SRV: the host and port as written). */
export function uriDestination(uri: SipUri): SipAddress {
  return { address: uri.params.maddr ?? uri.host, port: uri.port ?? DEFAULT_SIP_PORT };
}

export function dialogKey(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}|${localTag}|${remoteTag}`;
}

/**
 * One confirmed INVITE dialog (RFC 3261 12): Call-ID, both tags, the remote target (the far
 * end's Contact, updated by target refreshes), the route set (from Record-Route, reversed for
 * the UAC) and the CSeq numbers each way. It builds the requests we send inside the dialog
 * (12.2.1.1) and says where they go: the first route when loose-routing, else the remote target.
 */
export class SipDialog {
  private constructor(
    readonly callId: string,
    /** Our address in From of our requests, with our tag. */
    readonly local: NameAddress,
    /** The far end's, with its tag. */
    readonly remote: NameAddress,
    public remoteTarget: SipUri,
    /** Route header values, in the order our requests carry them. */
    readonly routeSet: readonly string[],
    private localSeq: number,
    /** The highest CSeq seen from the far end (undefined until it sends a request). */
    public remoteSeq: number | undefined,
    private readonly endpoint: LocalEndpoint,
  ) {}

  get localTag(): string {
    return this.local.params.tag ?? "";
  }

  get remoteTag(): string {
    return this.remote.params.tag ?? "";
  }

  /** Our Contact header value. */
  get contact(): string {
    return this.endpoint.contact;
  }

  get id(): string {
    return dialogKey(this.callId, this.localTag, this.remoteTag);
  }

  /** The UAS side, made from the INVITE we answer with a 2xx carrying `localTag` (12.1.1). */
  static forIncomingInvite(invite: SipRequest, localTag: string, endpoint: LocalEndpoint): SipDialog {
    const target = getContactUri(invite);
    if (!target) throw new SipParseError("an INVITE without a Contact cannot set up a dialog");
    const local = getTo(invite);
    local.params.tag = localTag;
    const routes = invite.headers.getAll("Record-Route");
    return new SipDialog(getCallId(invite), local, getFrom(invite), target, routes, randomInt(1, 2 ** 20), getCSeq(invite).seq, endpoint);
  }

  /** The UAC side, made from our INVITE and the 2xx that answered it (12.1.2). */
  static forAnsweredInvite(invite: SipRequest, response: SipResponse, endpoint: LocalEndpoint): SipDialog {
    const target = getContactUri(response);
    if (!target) throw new SipParseError("a 2xx without a Contact cannot set up a dialog");
    const routes = response.headers.getAll("Record-Route").reverse();
    return new SipDialog(getCallId(invite), getFrom(invite), getTo(response), target, routes, getCSeq(invite).seq, undefined, endpoint);
  }

  /** Where requests in this dialog are sent. */
  get destination(): SipAddress {
    const first = this.routeSet[0];
    if (first !== undefined) {
      const route = parseNameAddress(first).uri;
      if ("lr" in route.params) return uriDestination(route);
    }
    return uriDestination(this.remoteTarget);
  }

  /**
   * A request inside the dialog (12.2.1.1) with a new Via branch. CSeq goes up by one, except
   * for ACK and CANCEL, which reuse `seq` (the INVITE's).
   */
  createRequest(method: string, options: { seq?: number; headers?: ReadonlyArray<readonly [string, string]>; body?: Buffer } = {}): SipRequest {
    const seq = options.seq ?? ++this.localSeq;
    const headers = new SipHeaders()
      .append("Via", viaFor(this.endpoint))
      .append("Max-Forwards", "70")
      .append("From", formatNameAddress(this.local))
      .append("To", formatNameAddress(this.remote))
      .append("Call-ID", this.callId)
      .append("CSeq", `${seq} ${method}`);
    for (const route of this.routeSet) headers.append("Route", route);
    if (method !== "ACK" && method !== "CANCEL" && method !== "BYE") headers.append("Contact", this.endpoint.contact);
    for (const [name, value] of options.headers ?? []) headers.append(name, value);
    return { kind: "request", method, uri: this.requestUri(), headers, body: options.body ?? Buffer.alloc(0) };
  }

  /** Strict routing (no `lr` on the first route) puts the route in the Request-URI (12.2.1.1); we do not support it and use the target. */
  private requestUri(): string {
    return formatSipUri(this.remoteTarget);
  }
}
