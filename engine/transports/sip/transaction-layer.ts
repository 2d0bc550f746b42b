import { createHash, randomBytes } from "node:crypto";
import { systemClock, type Clock } from "../../audio/clock.js";
import { InviteClientTransaction } from "./invite-client-transaction.js";
import { InviteServerTransaction } from "./invite-server-transaction.js";
import { NonInviteClientTransaction } from "./non-invite-client-transaction.js";
import { NonInviteServerTransaction } from "./non-invite-server-transaction.js";
import { BRANCH_MAGIC_COOKIE, DEFAULT_SIP_PORT, formatVia, sentByKey, type Via } from "./sip-header-values.js";
import { buildResponse, getCallId, getCSeq, getFrom, getTopVia, parseSipMessage, serializeSipMessage, type SipMessage, type SipRequest, type SipResponse } from "./sip-message.js";
import { SipParseError } from "./sip-parse-error.js";
import {
  DEFAULT_TRANSACTION_TIMERS,
  type ClientTransactionUser,
  type SendDatagram,
  type SipAddress,
  type Transaction,
  type TransactionContext,
  type TransactionFailure,
  type TransactionTimerConfig,
} from "./transaction.js";

export type ClientTransaction = InviteClientTransaction | NonInviteClientTransaction;
export type ServerTransaction = InviteServerTransaction | NonInviteServerTransaction;

export interface IncomingRequest {
  request: SipRequest;
  source: SipAddress;
  /**
   * The server transaction that answers it (`respond`). Null for an ACK that matched no
   * transaction or passed through an Accepted one: the ACK for a 2xx, which is the TU's.
   */
  transaction: ServerTransaction | null;
  /** For a CANCEL: the INVITE server transaction it cancels (RFC 3261 9.2), if that still exists. */
  cancels?: InviteServerTransaction;
}

/** A final response given to a request before any transaction exists for it (see `TransactionUser.screen`). */
export interface Refusal {
  status: number;
  reason: string;
  headers?: ReadonlyArray<readonly [string, string]>;
}

/** Past a cap (server transactions here, calls in the user agent): come back later (RFC 3261 21.5.4). */
export const OVERLOADED: Readonly<Refusal> = Object.freeze({ status: 503, reason: "Service Unavailable", headers: [["Retry-After", "5"]] as const });

/**
 * What `screen` answers for a request within a live call (a BYE, a re-INVITE, a NOTIFY): it is
 * taken even past the transaction cap, up to as many again (a reserve only a call's peer can
 * reach, since it must know the dialog), so a flood of new requests cannot stop live calls from
 * hanging up.
 */
export const WITHIN_CALL = "within_call";

/** Default cap on live server transactions; each lives up to 64*T1 (32 s), so this also bounds the rate of requests taken. */
export const DEFAULT_MAX_SERVER_TRANSACTIONS = 1000;

/** The transaction user: the UA core (dialogs and calls) above this layer. */
export interface TransactionUser {
  /** A new request (never a retransmission of one a transaction holds). */
  request(incoming: IncomingRequest): void;
  /**
   * Consulted for each new request other than ACK, before a transaction is made for it. A
   * Refusal is sent once, statelessly (RFC 3261 8.2.7): no transaction, no retransmission, no
   * wait for an ACK, so a refused flood costs no memory and gets back one response per request.
   * WITHIN_CALL: the request belongs to a live call and may use the cap's reserve.
   */
  screen?(request: SipRequest, source: SipAddress): Refusal | typeof WITHIN_CALL | undefined;
  /** A response no client transaction claims: a retransmitted or forked 2xx to an INVITE (13.2.2.4). */
  strayResponse(response: SipResponse, source: SipAddress): void;
  /** A server transaction ended without completing: no ACK for a final response (Timer H), or a transport error. */
  serverTransactionFailed(transaction: ServerTransaction, reason: TransactionFailure, error?: unknown): void;
  /** A datagram that is not SIP; it has been dropped. */
  malformed?(error: SipParseError, source: SipAddress): void;
}

export interface TransactionLayerConfig {
  send: SendDatagram;
  user: TransactionUser;
  clock?: Clock;
  timers?: Partial<TransactionTimerConfig>;
  /** Live server transactions at most (default DEFAULT_MAX_SERVER_TRANSACTIONS); past it new requests get OVERLOADED. */
  maxServerTransactions?: number;
}

/** A new Via branch: the RFC 3261 magic cookie plus 96 random bits. */
export function createBranch(): string {
  return BRANCH_MAGIC_COOKIE + randomBytes(12).toString("base64url");
}

/**
 * The SIP transaction layer (RFC 3261 17) for one UDP socket, without the socket: datagrams come
 * in through `receive` and go out through the injected `send`. It matches requests to server
 * transactions (branch, sent-by and method, ACK to its INVITE, 17.2.3) and responses to client
 * transactions (branch and CSeq method, 17.1.3), creates server transactions for new requests,
 * and hands the TU what it must see: new requests, stray responses, failures. Requests the TU
 * screens out, and any past the cap on server transactions, are answered statelessly.
 */
export class TransactionLayer {
  private readonly config: Readonly<{ send: SendDatagram; user: TransactionUser; maxServerTransactions: number }>;
  private readonly context: TransactionContext;
  private readonly clients = new Map<string, ClientTransaction>();
  private readonly servers = new Map<string, ServerTransaction>();

  constructor(config: TransactionLayerConfig) {
    this.config = Object.freeze({ send: config.send, user: config.user, maxServerTransactions: config.maxServerTransactions ?? DEFAULT_MAX_SERVER_TRANSACTIONS });
    this.context = {
      clock: config.clock ?? systemClock,
      send: config.send,
      timers: Object.freeze({ ...DEFAULT_TRANSACTION_TIMERS, ...config.timers }),
      terminated: (transaction) => this.forget(transaction),
    };
  }

  /** Live transactions (for tests and metrics). */
  get size(): number {
    return this.clients.size + this.servers.size;
  }

  /**
   * Takes one received datagram. Malformed datagrams are reported (`malformed`) and dropped; a
   * bare CRLF keep-alive (RFC 5626) is ignored.
   */
  receive(datagram: Buffer, source: SipAddress): void {
    if (datagram.every((byte) => byte === 0x0d || byte === 0x0a)) return;
    let message: SipMessage;
    try {
      message = parseSipMessage(datagram);
    } catch (error) {
      this.config.user.malformed?.(error instanceof SipParseError ? error : new SipParseError(String(error)), source);
      return;
    }
    if (message.kind === "response") this.receiveResponse(message, source);
    else this.receiveRequest(message, source, datagram.byteLength);
  }

  /**
   * Starts a client transaction for `request`, whose top Via must carry a fresh branch
   * (`createBranch`). ACK is not sent this way: see `sendStateless`.
   */
  sendRequest(request: SipRequest, destination: SipAddress, user: ClientTransactionUser): ClientTransaction {
    if (request.method === "ACK") throw new Error("an ACK has no client transaction: use sendStateless");
    const branch = getTopVia(request).params.branch;
    if (!branch?.startsWith(BRANCH_MAGIC_COOKIE)) throw new Error(`top Via needs a branch starting with ${BRANCH_MAGIC_COOKIE}`);
    const id = `${branch}|${request.method}`;
    if (this.clients.has(id)) throw new Error(`a client transaction already uses branch ${branch} for ${request.method}`);
    const transaction =
      request.method === "INVITE"
        ? new InviteClientTransaction(id, request, destination, user, this.context)
        : new NonInviteClientTransaction(id, request, destination, user, this.context);
    this.clients.set(id, transaction);
    transaction.start();
    return transaction;
  }

  /**
   * Sends a message outside any transaction: the ACK for a 2xx and the UAS's 2xx
   * retransmissions once its transaction has ended. The result is `send`'s.
   */
  sendStateless(message: SipMessage, destination: SipAddress): void | Promise<unknown> {
    return this.config.send(serializeSipMessage(message), destination.address, destination.port);
  }

  /** Ends every transaction quietly (shutdown). */
  close(): void {
    for (const transaction of [...this.clients.values(), ...this.servers.values()]) transaction.terminate();
  }

  private receiveResponse(response: SipResponse, source: SipAddress): void {
    const branch = getTopVia(response).params.branch;
    const transaction = branch ? this.clients.get(`${branch}|${getCSeq(response).method}`) : undefined;
    if (transaction) transaction.receiveResponse(response, source);
    else this.config.user.strayResponse(response, source);
  }

  private receiveRequest(request: SipRequest, source: SipAddress, size: number): void {
    const via = stampTopVia(request, source);
    const user = this.config.user;
    if (request.method === "ACK") {
      const invite = this.servers.get(serverKey(request, via, "INVITE"));
      if (!invite?.receiveRequest(request)) user.request({ request, source, transaction: null });
      return;
    }
    const id = serverKey(request, via, request.method);
    const existing = this.servers.get(id);
    if (existing) {
      existing.receiveRequest(request);
      return;
    }
    const destination = responseDestination(via);
    const screened = user.screen?.(request, source);
    if (screened !== undefined && screened !== WITHIN_CALL) return this.refuse(request, screened, destination, size);
    const cap = screened === WITHIN_CALL ? 2 * this.config.maxServerTransactions : this.config.maxServerTransactions;
    if (this.servers.size >= cap) return this.refuse(request, OVERLOADED, destination, size);
    const report = (reason: TransactionFailure, error?: unknown) => user.serverTransactionFailed(transaction, reason, error);
    const transaction: ServerTransaction =
      request.method === "INVITE"
        ? new InviteServerTransaction(id, request, destination, report, this.context)
        : new NonInviteServerTransaction(id, request, destination, report, this.context);
    this.servers.set(id, transaction);
    transaction.start();
    const incoming: IncomingRequest = { request, source, transaction };
    if (request.method === "CANCEL") {
      // RFC 3261 9.2: the CANCEL matches as if it had the method of the request it cancels.
      const cancelled = this.servers.get(serverKey(request, via, "INVITE"));
      if (cancelled instanceof InviteServerTransaction) incoming.cancels = cancelled;
    }
    user.request(incoming);
  }

  /**
   * Sends `refusal` once, without a transaction, and only if it is no larger than the request:
   * a source address can be forged, and whoever it names must never get more bytes than the
   * forger sent (a bare request with compact headers may get no answer at all).
   */
  private refuse(request: SipRequest, refusal: Refusal, destination: SipAddress, size: number): void {
    const headers = refusal.headers ?? [];
    const datagram = serializeSipMessage(buildResponse(request, refusal.status, refusal.reason, { toTag: statelessTag(request), headers }));
    if (datagram.byteLength > size) return;
    try {
      void Promise.resolve(this.config.send(datagram, destination.address, destination.port)).catch(() => undefined);
    } catch {
      // Nothing to retry: a stateless response is sent once.
    }
  }

  private forget(transaction: Transaction): void {
    if (this.clients.get(transaction.id) === transaction) this.clients.delete(transaction.id);
    if (this.servers.get(transaction.id) === transaction) this.servers.delete(transaction.id);
  }
}

/**
 * RFC 3261 17.2.3 matching key. With the magic cookie: branch, sent-by and method. Without it
 * (RFC 2543 peers), a simplification of the old rules: Call-ID, CSeq number, From tag and sent-by.
 */
function serverKey(request: SipRequest, via: Via, method: string): string {
  const branch = via.params.branch;
  if (branch?.startsWith(BRANCH_MAGIC_COOKIE)) return `${branch}|${sentByKey(via)}|${method}`;
  return `2543|${getCallId(request)}|${getCSeq(request).seq}|${getFrom(request).params.tag ?? ""}|${sentByKey(via)}|${method}`;
}

/**
 * Records where the request really came from in its top Via (RFC 3261 18.2.1 `received`,
 * RFC 3581 `rport`), so responses go back through NATs; returns the updated Via. Whatever
 * `received` or `rport` value the sender wrote is replaced: responses must go back to the real
 * source, never to a host or port the sender names.
 */
function stampTopVia(request: SipRequest, source: SipAddress): Via {
  const via = getTopVia(request);
  const { received, rport } = via.params;
  if (via.host === source.address) delete via.params.received;
  else via.params.received = source.address;
  if (rport !== undefined) via.params.rport = String(source.port);
  if (via.params.received === received && via.params.rport === rport) return via;
  request.headers.set("Via", formatVia(via), ...request.headers.getAll("Via").slice(1));
  return via;
}

/** The To tag of a stateless response: the same for every retransmission of a request (RFC 3261 8.2.7). */
function statelessTag(request: SipRequest): string {
  const key = `${getCallId(request)}|${getFrom(request).params.tag ?? ""}|${getTopVia(request).params.branch ?? ""}|${getCSeq(request).seq}`;
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

/** RFC 3261 18.2.2 for UDP: `received` (or sent-by) host, `rport` (or sent-by) port. */
function responseDestination(via: Via): SipAddress {
  const rport = via.params.rport;
  return {
    address: via.params.received ?? via.host,
    port: rport ? Number(rport) : (via.port ?? DEFAULT_SIP_PORT),
  };
}
