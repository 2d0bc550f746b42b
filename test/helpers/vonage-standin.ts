import { createHash, createHmac, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import { verifySignature } from "@vonage/jwt";
import { VonageMediaClient } from "./vonage-media-client.js";
import { assertLoopback, StandInServer } from "./standin-server.js";

/**
 * A stand-in for Vonage's Voice API on 127.0.0.1, for carrier tests that run offline. It speaks
 * Vonage's wire protocol on both sides:
 * - the REST API (`POST /v1/calls`, `GET|PUT /v1/calls/{uuid}`), authenticated as Vonage does:
 *   `Authorization: Bearer <JWT>`, RS256 signed with the application's private key, checked with
 *   @vonage/jwt's verifySignature against the application's public key, and `application_id`
 *   must be this application's; Vonage's RFC 7807 errors (`{type, title, detail, instance}`)
 *   otherwise. Every call created and every update is recorded;
 * - as Vonage towards the application, driven by the test: event webhooks (JSON) and the answer
 *   webhook (GET with query parameters), signed as Vonage signs them: `Authorization: Bearer
 *   <JWT>`, HS256 keyed with the signature secret, claims iat, jti, iss "Vonage", api_key,
 *   application_id and, when there is a body, payload_hash (hex SHA-256 of the body); and the
 *   WebSocket a `connect` action's websocket endpoint asks for (VonageMediaClient).
 * Numbers in webhooks are written as Vonage writes them: E.164 digits without the `+`.
 * As Vonage does, hanging up an answered call through the API closes its WebSocket and sends the
 * `completed` event (`cancelled` for a call not yet answered), and a transfer closes the
 * WebSocket (the call leaves the `connect`); `idle()` waits for that background work.
 * URLs the application gives (public, https/wss) are signed as given and reached through
 * `rewrite`, which must map them to loopback: the stand-in refuses any other address.
 */

/** A call's status, as event webhooks carry it. */
export type VonageCallStatus = "started" | "ringing" | "answered" | "machine" | "busy" | "timeout" | "failed" | "rejected" | "unanswered" | "cancelled" | "completed";

/** An NCCO: a list of actions (`talk`, `connect`, ...), kept as JSON. */
export type Ncco = Array<Record<string, unknown>>;

/** One webhook the stand-in sent to the application, and what it answered. */
export interface SentWebhook {
  /** The public URL (for a GET, with its query), the one the JWT was made for. */
  url: string;
  method: "GET" | "POST";
  /** What was sent: the JSON body, or the query parameters of a GET. */
  payload: Record<string, unknown>;
  /** The body exactly as sent ("" for a GET). */
  rawBody: string;
  /** `Bearer <jwt>` as sent. */
  authorization: string;
  claims: Record<string, unknown>;
  status: number;
  body: string;
  contentType: string;
}

export interface VonageStandInCall {
  uuid: string;
  conversationUuid: string;
  direction: "outbound" | "inbound";
  /** The numbers as Vonage writes them (no `+`). */
  to: string;
  from: string;
  status: VonageCallStatus;
  /** The create request's JSON body (empty for an inbound call). */
  body: Record<string, unknown>;
  /** The NCCO it runs: the create's `ncco`, what `answer_url` answered, or the last transfer's. */
  ncco: Ncco | undefined;
  answerUrl: string | undefined;
  answerMethod: "GET" | "POST";
  eventUrl: string | undefined;
  eventMethod: "GET" | "POST";
  ringingTimer: number | undefined;
  machineDetection: string | undefined;
  /** Every `PUT /v1/calls/{uuid}` body, in order. */
  updates: Array<Record<string, unknown>>;
  /** The `connect` phone/sip endpoint of the last transfer's NCCO, if it has one. */
  dialed: Record<string, unknown> | undefined;
  /** The event webhooks sent, in order. */
  events: SentWebhook[];
  stream: VonageMediaClient | undefined;
  createdAt: Date;
  startTime: Date | undefined;
  endTime: Date | undefined;
}

/** One REST request the stand-in answered. */
export interface VonageApiRequest {
  method: string;
  path: string;
  body: unknown;
  status: number;
}

export interface VonageStandInOptions {
  /** The application's RSA public key (PEM): what REST tokens must verify against. */
  publicKeyPem: string | Buffer;
  applicationId?: string;
  /** The account's signature secret: the HS256 key of signed webhooks. */
  signatureSecret?: string;
  /** The account's API key, put in webhook tokens as `api_key`. */
  apiKey?: string;
  /** Maps a public URL the application gave (https://, wss://) to the loopback one to reach. */
  rewrite?: (url: string) => string;
}

const FINAL: ReadonlySet<VonageCallStatus> = new Set(["busy", "timeout", "failed", "rejected", "unanswered", "cancelled", "completed"]);
const NUMBER = /^\+?[1-9]\d{6,14}$/;
const UPDATE_ACTIONS = new Set(["hangup", "mute", "unmute", "earmuff", "unearmuff", "transfer"]);

/** An application's RSA key pair as PEM, the way the Vonage dashboard hands them out (the private key to Parley). */
export function vonageKeyPair(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    publicKeyPem: publicKey.export({ format: "pem", type: "spki" }).toString(),
    privateKeyPem: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
  };
}

/** The websocket endpoint of an NCCO's `connect` action, or undefined when it has none. */
export function websocketEndpoint(ncco: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(ncco)) return undefined;
  for (const action of ncco) {
    if (action?.action !== "connect" || !Array.isArray(action.endpoint)) continue;
    const endpoint = action.endpoint.find((e: unknown) => (e as { type?: unknown })?.type === "websocket");
    if (endpoint) return endpoint as Record<string, unknown>;
  }
  return undefined;
}

/** The phone, sip or vbc endpoint an NCCO's `connect` dials (a transfer), or undefined. */
export function dialedEndpoint(ncco: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(ncco)) return undefined;
  for (const action of ncco) {
    if (action?.action !== "connect" || !Array.isArray(action.endpoint)) continue;
    const endpoint = action.endpoint.find((e: unknown) => ["phone", "sip", "vbc"].includes(String((e as { type?: unknown })?.type)));
    if (endpoint) return endpoint as Record<string, unknown>;
  }
  return undefined;
}

const vonageNumber = (n: string) => n.replace(/^\+/, "");
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64url");

class VonageError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    readonly title: string,
    readonly detail: string,
    readonly invalidParameters?: Array<{ name: string; reason: string }>,
  ) {
    super(detail);
  }
}

const unauthorized = () => new VonageError(401, "unauthorized", "Unauthorized", "You did not provide correct credentials.");
const badRequest = (name: string, reason: string) => new VonageError(400, "bad-request", "Bad Request", `Invalid parameter: ${name}`, [{ name, reason }]);

export class VonageStandIn extends StandInServer<VonageStandInCall> {
  protected readonly carrier = "Vonage";
  readonly applicationId: string;
  readonly signatureSecret: string;
  readonly apiKey: string;
  readonly publicKeyPem: string | Buffer;
  readonly requests: VonageApiRequest[] = [];
  rewrite: (url: string) => string;
  /** Streams already pumping frames in real time (one pump each). */
  private pacing = new WeakSet<VonageMediaClient>();

  constructor(options: VonageStandInOptions) {
    super();
    this.publicKeyPem = options.publicKeyPem;
    this.applicationId = options.applicationId ?? randomUUID();
    this.signatureSecret = options.signatureSecret ?? randomBytes(24).toString("base64url");
    this.apiKey = options.apiKey ?? randomBytes(4).toString("hex");
    this.rewrite = options.rewrite ?? ((url) => url);
  }

  /** The only call created through the API so far (throws when there are none or several). */
  onlyCall(): VonageStandInCall {
    const outbound = [...this.calls.values()].filter((c) => c.direction === "outbound");
    if (outbound.length !== 1) throw new Error(`expected one call created at the Vonage stand-in, got ${outbound.length}`);
    return outbound[0]!;
  }

  // ---- Vonage towards the application --------------------------------------------------------

  /**
   * Sends the call's event webhook for `status` (to its event URL; resolves to undefined when it
   * has none) and moves the call's status. `extra` adds or overrides fields (`detail`, ...).
   */
  async event(uuid: string, status: VonageCallStatus, extra: Record<string, unknown> = {}): Promise<SentWebhook | undefined> {
    const call = this.call(uuid);
    const now = new Date();
    if (status === "answered") call.startTime ??= now;
    if (FINAL.has(status)) call.endTime ??= now;
    call.status = status;
    if (!call.eventUrl) return undefined;
    const payload: Record<string, unknown> = {
      from: call.from,
      to: call.to,
      uuid: call.uuid,
      conversation_uuid: call.conversationUuid,
      status,
      direction: call.direction,
      timestamp: now.toISOString(),
    };
    if (status === "answered") payload.start_time = null;
    if (FINAL.has(status)) {
      payload.start_time = call.startTime?.toISOString() ?? null;
      payload.end_time = call.endTime!.toISOString();
      payload.duration = call.startTime ? String(Math.round((call.endTime!.getTime() - call.startTime.getTime()) / 1000)) : "0";
    }
    const sent = await this.send(call.eventUrl, call.eventMethod, { ...payload, ...extra });
    call.events.push(sent);
    return sent;
  }

  /**
   * A call coming in to `to`: Vonage's answer webhook to `answerUrl` (GET with `to`, `from`,
   * `uuid`, `conversation_uuid` in the query, signed without payload_hash; or POST with them as
   * JSON). Records the call (inbound, ringing; events go to `eventUrl`) with the NCCO answered.
   */
  async incomingCall(
    answerUrl: string,
    caller: { from: string; to: string; eventUrl?: string; method?: "GET" | "POST"; extra?: Record<string, string> },
  ): Promise<{ uuid: string; conversationUuid: string; status: number; ncco: Ncco | undefined; body: string; contentType: string }> {
    const call = this.newCall("inbound", caller.to, caller.from, {});
    call.status = "ringing";
    call.answerUrl = answerUrl;
    call.answerMethod = caller.method ?? "GET";
    call.eventUrl = caller.eventUrl;
    const sent = await this.send(answerUrl, call.answerMethod, { ...this.answerParams(call), ...caller.extra });
    const ncco = sent.status >= 200 && sent.status < 300 ? parseNcco(sent.body) : undefined;
    call.ncco = ncco;
    return { uuid: call.uuid, conversationUuid: call.conversationUuid, status: sent.status, ncco, body: sent.body, contentType: sent.contentType };
  }

  /**
   * The NCCO an outbound call runs once answered: its inline `ncco`, or what its `answer_url`
   * answers to Vonage's signed request. Throws when the application does not answer 2xx with
   * an NCCO (Vonage would fail the call).
   */
  async nccoOf(uuid: string): Promise<Ncco> {
    const call = this.call(uuid);
    if (call.ncco !== undefined) return call.ncco;
    if (!call.answerUrl) throw new Error(`call ${uuid} has neither ncco nor answer_url`);
    const sent = await this.send(call.answerUrl, call.answerMethod, this.answerParams(call));
    const ncco = sent.status >= 200 && sent.status < 300 ? parseNcco(sent.body) : undefined;
    if (!ncco) throw new Error(`the call's answer_url answered ${sent.status}: ${sent.body.slice(0, 200)}`);
    call.ncco = ncco;
    return ncco;
  }

  /** The callee picks up: the `answered` event, then the call's NCCO, whose websocket is opened. */
  async answer(uuid: string): Promise<VonageMediaClient> {
    await this.event(uuid, "answered");
    return this.connectWebsocket(await this.nccoOf(uuid), { uuid });
  }

  /**
   * Runs an NCCO's `connect` to a websocket endpoint as Vonage's media server: a WebSocket to
   * its `uri` (reached through `rewrite`), `websocket:connected` with the endpoint's content type
   * and `headers` first, then L16 audio. An endpoint `authorization` of type `vonage` puts a
   * token signed like a webhook's (no payload_hash) in the upgrade's Authorization header; of
   * type `custom`, its `value`. With `uuid`, the socket belongs to that call (answered; closed
   * when the call is hung up or transferred).
   */
  async connectWebsocket(ncco: unknown, options: { uuid?: string; rewrite?: (url: string) => string } = {}): Promise<VonageMediaClient> {
    const endpoint = websocketEndpoint(ncco);
    if (!endpoint || typeof endpoint.uri !== "string") throw new Error(`no connect action to a websocket endpoint in ${JSON.stringify(ncco)}`);
    if (!/^wss?:\/\//.test(endpoint.uri)) throw new Error(`a websocket endpoint's uri is ws:// or wss://, not ${endpoint.uri}`);
    const target = (options.rewrite ?? this.rewrite)(endpoint.uri);
    assertLoopback(target, "Vonage");
    const call = options.uuid ? this.call(options.uuid) : undefined;
    const upgradeHeaders: Record<string, string> = {};
    const authorization = endpoint.authorization as { type?: unknown; value?: unknown } | undefined;
    if (authorization?.type === "vonage") upgradeHeaders.authorization = `Bearer ${this.webhookToken(undefined)}`;
    else if (authorization?.type === "custom" && typeof authorization.value === "string") upgradeHeaders.authorization = authorization.value;
    const client = await VonageMediaClient.connect(target, {
      contentType: typeof endpoint["content-type"] === "string" ? endpoint["content-type"] : undefined,
      headers: (endpoint.headers as Record<string, unknown> | undefined) ?? {},
      upgradeHeaders,
    });
    if (call) {
      call.status = "answered";
      call.startTime ??= new Date();
      call.stream = client;
    }
    return client;
  }

  /** Streams PCM (at the socket's rate) into the call's WebSocket: paced in real time, or all at once. */
  async play(uuid: string, samples: Int16Array, options: { realTime?: boolean } = {}): Promise<void> {
    const stream = this.call(uuid).stream;
    if (!stream) throw new Error(`call ${uuid} has no websocket`);
    if (!options.realTime) return stream.sendUnpaced(samples);
    if (!this.pacing.has(stream)) stream.startStreaming();
    this.pacing.add(stream);
    await stream.speak(samples);
  }

  /** The far end hangs up: the WebSocket closes, then the `completed` event goes. */
  async hangUpRemote(uuid: string): Promise<SentWebhook | undefined> {
    await this.endStream(uuid);
    return this.event(uuid, "completed");
  }

  /** Closes the call's WebSocket, as Vonage does when the call leaves the `connect`. */
  async endStream(uuid: string): Promise<void> {
    const stream = this.call(uuid).stream;
    if (!stream) return;
    stream.hangUp();
    await stream.closed;
  }

  /** A token as Vonage signs webhooks: HS256 with the signature secret; payload_hash when there is a body. */
  webhookToken(rawBody: string | undefined, now = Date.now()): string {
    const claims: Record<string, unknown> = {
      iat: Math.floor(now / 1000),
      jti: randomUUID(),
      iss: "Vonage",
      ...(rawBody ? { payload_hash: createHash("sha256").update(rawBody).digest("hex") } : {}),
      api_key: this.apiKey,
      application_id: this.applicationId,
    };
    const signed = `${base64url({ alg: "HS256", typ: "JWT" })}.${base64url(claims)}`;
    return `${signed}.${createHmac("sha256", this.signatureSecret).update(signed).digest("base64url")}`;
  }

  private answerParams(call: VonageStandInCall): Record<string, string> {
    return { to: call.to, from: call.from, uuid: call.uuid, conversation_uuid: call.conversationUuid, region_url: "https://api-us-3.vonage.com" };
  }

  /** A webhook as Vonage sends it: JSON (query for GET), signed, to the public URL through `rewrite`. */
  private async send(publicUrl: string, method: "GET" | "POST", payload: Record<string, unknown>): Promise<SentWebhook> {
    let url = publicUrl;
    let rawBody = "";
    if (method === "GET") {
      const u = new URL(publicUrl);
      for (const [k, v] of Object.entries(payload)) u.searchParams.append(k, v === null || v === undefined ? "" : String(v));
      url = u.toString();
    } else rawBody = JSON.stringify(payload);
    const token = this.webhookToken(rawBody || undefined);
    const target = this.rewrite(url);
    assertLoopback(target, "Vonage");
    const authorization = `Bearer ${token}`;
    const response = await fetch(target, {
      method,
      redirect: "manual",
      headers: { authorization, "user-agent": "Vonage Voice API", ...(method === "POST" ? { "content-type": "application/json" } : {}) },
      body: method === "POST" ? rawBody : undefined,
    });
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
    return { url, method, payload, rawBody, authorization, claims, status: response.status, body: await response.text(), contentType: response.headers.get("content-type") ?? "" };
  }

  private newCall(direction: "outbound" | "inbound", to: string, from: string, body: Record<string, unknown>): VonageStandInCall {
    const call: VonageStandInCall = {
      uuid: randomUUID(),
      conversationUuid: `CON-${randomUUID()}`,
      direction,
      to: vonageNumber(to),
      from: vonageNumber(from),
      status: "started",
      body,
      ncco: undefined,
      answerUrl: undefined,
      answerMethod: "GET",
      eventUrl: undefined,
      eventMethod: "POST",
      ringingTimer: undefined,
      machineDetection: undefined,
      updates: [],
      dialed: undefined,
      events: [],
      stream: undefined,
      createdAt: new Date(),
      startTime: undefined,
      endTime: undefined,
    };
    this.calls.set(call.uuid, call);
    return call;
  }

  // ---- Vonage's Voice API -----------------------------------------------------------------------

  protected serve(req: http.IncomingMessage, text: string, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", this.base);
    let body: unknown;
    const answer = (status: number, json?: unknown): void => {
      this.requests.push({ method: req.method ?? "", path: url.pathname, body, status });
      res.writeHead(status, json === undefined ? {} : { "content-type": "application/json" });
      res.end(json === undefined ? undefined : JSON.stringify(json));
    };
    try {
      if (!this.authorized(req.headers.authorization)) throw unauthorized();
      const failure = this.failures.shift();
      if (failure) throw new VonageError(failure, "internal-error", failure === 503 ? "Service Unavailable" : "Internal Server Error", "The stand-in was told to fail this request.");
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          throw new VonageError(400, "bad-request", "Bad Request", "The request body is not valid JSON.");
        }
      }
      const route = /^\/v1\/calls(?:\/([^/]+))?\/?$/.exec(url.pathname);
      const notFound = new VonageError(404, "not-found", "Not Found", `The requested resource ${url.pathname} does not exist.`);
      if (!route) throw notFound;
      const id = route[1];
      if (!id && req.method === "POST") return answer(201, this.createCall(body));
      const call = id ? this.calls.get(id) : undefined;
      if (id && !call) throw new VonageError(404, "not-found", "Not Found", `Call ${id} doesn't exist.`);
      if (call && req.method === "GET") return answer(200, this.callJson(call));
      if (call && req.method === "PUT") {
        this.updateCall(call, body);
        return answer(204);
      }
      throw new VonageError(405, "method-not-allowed", "Method Not Allowed", `${req.method} is not allowed on ${url.pathname}.`);
    } catch (e) {
      const error = e instanceof VonageError ? e : new VonageError(500, "internal-error", "Internal Server Error", `stand-in failure: ${(e as Error).message}`);
      answer(error.status, {
        type: `https://developer.nexmo.com/api-errors#${error.kind}`,
        title: error.title,
        detail: error.detail,
        instance: randomUUID(),
        ...(error.invalidParameters ? { invalid_parameters: error.invalidParameters } : {}),
      });
    }
  }

  /** An RS256 token that @vonage/jwt verifies with the application's public key, for this application. */
  private authorized(header: string | undefined): boolean {
    const token = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1];
    if (!token) return false;
    try {
      if (!verifySignature(token, this.publicKeyPem)) return false;
      const [headerPart, claimsPart] = token.split(".") as [string, string];
      const head = JSON.parse(Buffer.from(headerPart, "base64url").toString("utf8"));
      const claims = JSON.parse(Buffer.from(claimsPart, "base64url").toString("utf8"));
      return head?.alg === "RS256" && claims?.application_id === this.applicationId;
    } catch {
      return false;
    }
  }

  private createCall(input: unknown): Record<string, unknown> {
    if (input === null || typeof input !== "object" || Array.isArray(input)) throw new VonageError(400, "bad-request", "Bad Request", "The request body must be a JSON object.");
    const body = input as Record<string, unknown>;
    const to = Array.isArray(body.to) ? (body.to[0] as Record<string, unknown> | undefined) : undefined;
    if (!to || typeof to !== "object") throw badRequest("to", "is required: a list of one endpoint");
    if (to.type !== "phone" || typeof to.number !== "string" || !NUMBER.test(to.number)) throw badRequest("to", "must be a phone endpoint with an E.164 number");
    const from = body.from as Record<string, unknown> | undefined;
    if (body.random_from_number !== true && (!from || from.type !== "phone" || typeof from.number !== "string" || !NUMBER.test(from.number))) throw badRequest("from", "must be a phone endpoint with an E.164 number");
    const hasNcco = body.ncco !== undefined;
    const hasAnswerUrl = body.answer_url !== undefined;
    if (hasNcco === hasAnswerUrl) throw badRequest("ncco", "give either ncco or answer_url");
    if (hasNcco && (!Array.isArray(body.ncco) || body.ncco.length === 0)) throw badRequest("ncco", "must be a non-empty list of actions");
    if (hasAnswerUrl && !isUrlList(body.answer_url)) throw badRequest("answer_url", "must be a list of one URL");
    if (body.event_url !== undefined && !isUrlList(body.event_url)) throw badRequest("event_url", "must be a list of one URL");
    if (body.ringing_timer !== undefined && !(Number.isInteger(body.ringing_timer) && (body.ringing_timer as number) >= 1 && (body.ringing_timer as number) <= 120)) throw badRequest("ringing_timer", "must be an integer from 1 to 120");
    if (body.machine_detection !== undefined && body.machine_detection !== "continue" && body.machine_detection !== "hangup") throw badRequest("machine_detection", "must be continue or hangup");
    const call = this.newCall("outbound", to.number, typeof from?.number === "string" ? from.number : "", body);
    call.ncco = hasNcco ? (body.ncco as Ncco) : undefined;
    call.answerUrl = hasAnswerUrl ? (body.answer_url as string[])[0] : undefined;
    call.answerMethod = body.answer_method === "POST" ? "POST" : "GET";
    call.eventUrl = (body.event_url as string[] | undefined)?.[0];
    call.eventMethod = body.event_method === "GET" ? "GET" : "POST";
    call.ringingTimer = body.ringing_timer as number | undefined;
    call.machineDetection = body.machine_detection as string | undefined;
    return { uuid: call.uuid, status: "started", direction: "outbound", conversation_uuid: call.conversationUuid };
  }

  /**
   * `hangup` ends the call (`completed` once answered, `cancelled` before), closing its socket
   * and sending the final event in the background; `transfer` to an NCCO (inline or by URL)
   * moves a live call out of its `connect`, closing the socket; mute and earmuff are recorded.
   * The stand-in refuses a transfer of a call that has ended (400).
   */
  private updateCall(call: VonageStandInCall, input: unknown): void {
    const body = (input ?? {}) as Record<string, unknown>;
    if (typeof body !== "object" || Array.isArray(body) || !UPDATE_ACTIONS.has(String(body.action))) throw badRequest("action", "must be hangup, mute, unmute, earmuff, unearmuff or transfer");
    const live = !FINAL.has(call.status);
    if (body.action === "transfer") {
      const destination = body.destination as Record<string, unknown> | undefined;
      if (!destination || destination.type !== "ncco" || (!Array.isArray(destination.ncco) && !isUrlList(destination.url))) throw badRequest("destination", "must be {type: ncco} with an ncco or a url");
      if (!live) throw new VonageError(400, "bad-request", "Bad Request", `Call ${call.uuid} is not in progress.`);
    }
    call.updates.push(body);
    if (body.action === "hangup" && live) {
      const final: VonageCallStatus = call.status === "answered" ? "completed" : "cancelled";
      call.status = final;
      call.endTime = new Date();
      this.inBackground(async () => {
        await this.endStream(call.uuid);
        await this.event(call.uuid, final);
      });
    } else if (body.action === "transfer") {
      const destination = body.destination as { ncco?: Ncco; url?: string[] };
      call.ncco = destination.ncco;
      call.dialed = dialedEndpoint(destination.ncco);
      this.inBackground(() => this.endStream(call.uuid));
    }
  }

  private callJson(call: VonageStandInCall): Record<string, unknown> {
    const duration = call.startTime && call.endTime ? String(Math.round((call.endTime.getTime() - call.startTime.getTime()) / 1000)) : null;
    return {
      _links: { self: { href: `/v1/calls/${call.uuid}` } },
      uuid: call.uuid,
      conversation_uuid: call.conversationUuid,
      to: { type: "phone", number: call.to },
      from: { type: "phone", number: call.from },
      status: call.status,
      direction: call.direction,
      rate: null,
      price: null,
      duration,
      start_time: call.startTime?.toISOString() ?? null,
      end_time: call.endTime?.toISOString() ?? null,
      network: null,
    };
  }
}

function isUrlList(value: unknown): value is string[] {
  return Array.isArray(value) && value.length === 1 && typeof value[0] === "string" && /^https?:\/\//.test(value[0]);
}

function parseNcco(text: string): Ncco | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? (value as Ncco) : undefined;
  } catch {
    return undefined;
  }
}
