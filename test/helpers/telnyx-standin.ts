import { generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from "node:crypto";
import http from "node:http";
import { TelnyxMediaClient, type TelnyxStreamEncoding } from "./telnyx-media-client.js";
import { assertLoopback, StandInServer } from "./standin-server.js";


/**
 * A stand-in for Telnyx on 127.0.0.1, for carrier tests that run offline. It speaks Telnyx's
 * wire protocol on both sides (the Twilio stand-in's twin):
 * - its Call Control REST API (v2: `POST /v2/calls`, `POST /v2/calls/{call_control_id}/actions/
 *   answer|hangup|reject|transfer|streaming_start|streaming_stop`), JSON, with `Authorization:
 *   Bearer <API key>` and Telnyx's error bodies (`{errors:[{code,title,detail,meta}]}`), recording
 *   every call dialled and every command;
 * - as Telnyx towards the application, driven by the test: Call Control webhooks (`{data:{event_type,
 *   id, occurred_at, payload, record_type:"event"}, meta}`) signed as Telnyx signs them (ed25519
 *   over `${telnyx-timestamp}|${body}`, base64 in `telnyx-signature-ed25519`, with a key pair it
 *   makes: `publicKeyBase64` is what Telnyx's portal shows), and the media stream a `stream_url`
 *   asks for (TelnyxMediaClient, a real WebSocket).
 * As Telnyx does, commands cause their webhooks in the background (unless `autoEvents` is off):
 * a dial sends `call.initiated` (after its answer), answering an incoming call sends
 * `call.answered` then opens its stream (`streaming.started`, or `streaming.failed`), hanging up
 * (or streaming_stop) ends the stream (`stop`, close, `streaming.stopped`) and sends `call.hangup`.
 * What the far end does is the test's: `answer`, `hangUpRemote`, `event`. `idle()` waits for
 * the background work. URLs the application gives (public, https/wss) are signed as given and
 * reached through `rewrite`, which must map them to loopback: the stand-in refuses any other address.
 */

export type TelnyxDirection = "incoming" | "outgoing";
/** A call's state as its webhooks name it, plus `ended` once it has hung up. */
export type TelnyxCallState = "parked" | "bridging" | "answered" | "ended";
/** `call.hangup`'s `hangup_cause` values. */
export type TelnyxHangupCause = "call_rejected" | "normal_clearing" | "originator_cancel" | "timeout" | "time_limit" | "user_busy" | "not_found" | "no_answer" | "unspecified";

/** One webhook the stand-in sent to the application, and what it answered. */
export interface SentWebhook {
  /** The public URL (the one reached through `rewrite`). */
  url: string;
  eventType: string;
  /** The body as sent (what was signed), and parsed. */
  rawBody: string;
  body: any;
  timestamp: string;
  signature: string;
  status: number;
  response: string;
}

/** One Call Control command, as received. */
export interface TelnyxCommand {
  action: string;
  body: Record<string, unknown>;
  at: Date;
}

export interface TelnyxStandInCall {
  callControlId: string;
  callLegId: string;
  callSessionId: string;
  connectionId: string;
  direction: TelnyxDirection;
  from: string;
  to: string;
  state: TelnyxCallState;
  /** Where its webhooks go: the dial's `webhook_url`, else the connection's (`webhookUrl`, or incomingCall's). */
  webhookUrl: string | undefined;
  /** The last `client_state` a command set: every later webhook carries it. */
  clientState: string | null;
  /** The dial request's body (for an incoming call, empty). */
  params: Record<string, unknown>;
  streamUrl: string | undefined;
  streamTrack: string | undefined;
  streamAuthToken: string | undefined;
  /** Every command, in order (duplicates of a `command_id` are not recorded twice, as Telnyx ignores them). */
  commands: TelnyxCommand[];
  /** The `to` of the last transfer command. */
  transferredTo: string | undefined;
  hangupCause: TelnyxHangupCause | undefined;
  webhooks: SentWebhook[];
  stream: TelnyxMediaClient | undefined;
  /** Why the last stream could not be opened (the upgrade refused, the connection failed). */
  streamError: Error | undefined;
  startTime: Date;
  answerTime: Date | undefined;
  endTime: Date | undefined;
}

/** One REST request the stand-in answered. */
export interface TelnyxApiRequest {
  method: string;
  path: string;
  body: unknown;
  status: number;
}

export interface TelnyxStandInOptions {
  apiKey?: string;
  /** The Call Control application (connection) id dials must name; any non-empty one when absent. */
  connectionId?: string;
  /** The connection's webhook URL (set in Telnyx's portal): where a call's webhooks go without a `webhook_url`. */
  webhookUrl?: string;
  /** Maps a public URL the application gave (https://, wss://) to the loopback one to reach. */
  rewrite?: (url: string) => string;
  /** Whether commands send their webhooks and open or end streams by themselves (default true). */
  autoEvents?: boolean;
  encoding?: TelnyxStreamEncoding;
}

/** How one webhook is sent: elsewhere, at another time, with another key, or unsigned (for refusal tests). */
export interface WebhookSendOptions {
  url?: string;
  /** Unix seconds for `telnyx-timestamp` (default now). */
  timestamp?: number;
  signWith?: KeyObject;
  unsigned?: boolean;
}

/** The connection id of incoming calls when the stand-in was given none (Telnyx's are digits). */
const DEFAULT_CONNECTION_ID = "1494404757140276705";
const ACTIONS = new Set(["answer", "hangup", "reject", "transfer", "streaming_start", "streaming_stop"]);
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A call control id as Telnyx makes them: a version prefix and base64url. */
const callControlId = () => "v3:" + randomBytes(30).toString("base64url");

class TelnyxError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail: string,
    readonly pointer?: string,
  ) {
    super(detail);
  }

  body(): Record<string, unknown> {
    const error: Record<string, unknown> = { code: this.code, title: this.title, detail: this.detail, meta: { url: `https://developers.telnyx.com/docs/overview/errors/${this.code}` } };
    if (this.pointer) error.source = { pointer: this.pointer };
    return { errors: [error] };
  }
}

const missing = (name: string) => new TelnyxError(422, "10004", "Missing required parameter", `The '${name}' parameter is required.`, `/${name}`);
const notFound = () => new TelnyxError(404, "10005", "Resource not found", "The requested resource or URL could not be found.");
const ended = () => new TelnyxError(422, "90018", "Call has already ended", "This call is no longer active and can't receive commands.");
const badRequest = (detail: string, pointer?: string) => new TelnyxError(422, "10015", "Bad Request", detail, pointer);

export class TelnyxStandIn extends StandInServer<TelnyxStandInCall> {
  protected readonly carrier = "Telnyx";
  readonly apiKey: string;
  readonly connectionId: string | undefined;
  /** The ed25519 public key as Telnyx's portal shows it: base64 of its raw 32 bytes (PARLEY_TELNYX_PUBLIC_KEY). */
  readonly publicKeyBase64: string;
  readonly requests: TelnyxApiRequest[] = [];
  /** Every webhook sent, in order, whatever its call. */
  readonly webhooks: SentWebhook[] = [];
  webhookUrl: string | undefined;
  rewrite: (url: string) => string;
  autoEvents: boolean;
  readonly encoding: TelnyxStreamEncoding;
  /** The account id streams carry as `user_id`. */
  readonly userId = randomUUID();
  private readonly privateKey: KeyObject;
  private pacing = new WeakSet<TelnyxMediaClient>();
  private commandIds = new Map<string, Set<string>>();

  constructor(options: TelnyxStandInOptions = {}) {
    super();
    this.apiKey = options.apiKey ?? "KEY" + randomBytes(16).toString("hex").toUpperCase() + "_" + randomBytes(16).toString("base64url");
    this.connectionId = options.connectionId;
    this.webhookUrl = options.webhookUrl;
    this.rewrite = options.rewrite ?? ((url) => url);
    this.autoEvents = options.autoEvents ?? true;
    this.encoding = options.encoding ?? "PCMU";
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    this.privateKey = privateKey;
    // The SPKI DER of an ed25519 key ends with its raw 32 bytes.
    this.publicKeyBase64 = publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
  }

  /** `http://127.0.0.1:<port>/v2`: what Telnyx's own client takes as `baseURL`. */
  get apiBase(): string {
    return `${this.url}/v2`;
  }

  /** The only call dialled through the API so far (throws when there are none or several). */
  onlyCall(): TelnyxStandInCall {
    const outgoing = [...this.calls.values()].filter((c) => c.direction === "outgoing");
    if (outgoing.length !== 1) throw new Error(`expected one call dialled at the Telnyx stand-in, got ${outgoing.length}`);
    return outgoing[0]!;
  }

  // ---- Telnyx towards the application --------------------------------------------------------

  /**
   * Sends one Call Control webhook about the call, signed, to its webhook URL (or `options.url`):
   * the payload Telnyx sends for `eventType` (ids, connection, from, to, the last client_state,
   * and per event: direction and state for call.initiated, state for call.answered, state,
   * hangup_cause and hangup_source for call.hangup, stream_url for streaming.*), then
   * `extraPayload`. Moves the call: call.answered answers it, call.hangup ends it (with its cause).
   */
  async event(id: string, eventType: string, extraPayload: Record<string, unknown> = {}, options: WebhookSendOptions = {}): Promise<SentWebhook> {
    const call = this.call(id);
    const now = new Date();
    const payload: Record<string, unknown> = {
      call_control_id: call.callControlId,
      call_leg_id: call.callLegId,
      call_session_id: call.callSessionId,
      client_state: call.clientState,
      connection_id: call.connectionId,
      from: call.from,
      to: call.to,
    };
    if (eventType === "call.initiated") {
      Object.assign(payload, { direction: call.direction, state: call.direction === "incoming" ? "parked" : "bridging", caller_id_name: call.from, calling_party_type: "pstn", start_time: call.startTime.toISOString() });
    } else if (eventType === "call.answered") {
      Object.assign(payload, { state: "answered", start_time: call.startTime.toISOString() });
    } else if (eventType === "call.hangup") {
      const cause = (extraPayload.hangup_cause as TelnyxHangupCause | undefined) ?? "normal_clearing";
      Object.assign(payload, { state: "hangup", hangup_cause: cause, hangup_source: "unknown", sip_hangup_cause: "unspecified", start_time: call.startTime.toISOString() });
    } else if (eventType.startsWith("streaming.")) {
      Object.assign(payload, { stream_url: call.streamUrl ?? null });
    }
    Object.assign(payload, extraPayload);
    if (eventType === "call.answered" && call.state !== "ended") {
      call.state = "answered";
      call.answerTime ??= now;
    }
    if (eventType === "call.hangup") {
      call.state = "ended";
      call.endTime ??= now;
      call.hangupCause = payload.hangup_cause as TelnyxHangupCause;
    }
    const url = options.url ?? call.webhookUrl;
    if (!url) throw new Error(`call ${id} has no webhook URL (no webhook_url, no connection webhook URL)`);
    const sent = await this.send(url, { event_type: eventType, id: randomUUID(), occurred_at: now.toISOString(), payload, record_type: "event" }, options);
    call.webhooks.push(sent);
    return sent;
  }

  /**
   * A call coming in to `to`: records it (incoming, parked) with `webhookUrl` as its connection's
   * webhook URL, and sends `call.initiated` there, signed.
   */
  async incomingCall(webhookUrl: string, caller: { from: string; to: string; connectionId?: string }): Promise<{ callControlId: string; webhook: SentWebhook }> {
    const call = this.newCall("incoming", caller.from, caller.to, caller.connectionId ?? this.connectionId ?? DEFAULT_CONNECTION_ID, webhookUrl, {});
    const webhook = await this.event(call.callControlId, "call.initiated");
    return { callControlId: call.callControlId, webhook };
  }

  /**
   * The far end answers a dialled call: `call.answered`, then, when the dial asked for a
   * `stream_url`, the stream opens and `streaming.started` goes. Resolves with the stream.
   */
  async answer(id: string): Promise<TelnyxMediaClient | undefined> {
    const call = this.call(id);
    if (call.state === "ended") throw new Error(`call ${id} has ended`);
    await this.event(id, "call.answered");
    return this.openStream(call);
  }

  /**
   * The far end hangs up (or the call fails to connect: `user_busy`, `timeout`, `no_answer`,
   * `call_rejected`): the stream gets `stop` and closes (`streaming.stopped`), then `call.hangup`
   * with `cause`, its source the far end.
   */
  async hangUpRemote(id: string, cause: TelnyxHangupCause = "normal_clearing"): Promise<SentWebhook> {
    const call = this.call(id);
    await this.endStream(id);
    return this.event(id, "call.hangup", { hangup_cause: cause, hangup_source: call.direction === "outgoing" ? "callee" : "caller" });
  }

  /**
   * Opens a media stream to `streamUrl` (public; reached through `rewrite`) as Telnyx's media
   * server: `connected`, then `start` naming the call. With a call this stand-in knows, its ids,
   * numbers, client_state and stream auth token go in `start` and the stream becomes the call's.
   */
  async connectStream(streamUrl: string, options: { callControlId: string; encoding?: TelnyxStreamEncoding; authToken?: string; customParameters?: Record<string, string>; rewrite?: (url: string) => string }): Promise<TelnyxMediaClient> {
    const target = (options.rewrite ?? this.rewrite)(streamUrl);
    assertLoopback(target, "Telnyx");
    const call = this.calls.get(options.callControlId);
    const client = await TelnyxMediaClient.connect(target, {
      callControlId: options.callControlId,
      callSessionId: call?.callSessionId,
      userId: this.userId,
      from: call?.from ?? null,
      to: call?.to ?? null,
      clientState: call?.clientState ?? null,
      customParameters: options.customParameters,
      encoding: options.encoding ?? this.encoding,
      authToken: options.authToken ?? call?.streamAuthToken,
    });
    if (call) call.stream = client;
    return client;
  }

  /** Streams 8 kHz PCM into the call's media stream: paced in real time, or all at once. */
  async play(id: string, samples: Int16Array, options: { realTime?: boolean } = {}): Promise<void> {
    const stream = this.call(id).stream;
    if (!stream) throw new Error(`call ${id} has no media stream`);
    if (!options.realTime) return stream.sendUnpaced(samples);
    if (!this.pacing.has(stream)) stream.startStreaming();
    this.pacing.add(stream);
    await stream.speak(samples);
  }

  /** Sends `stop` on the call's stream and closes it, then `streaming.stopped`; nothing when it has none open. */
  async endStream(id: string): Promise<void> {
    const call = this.call(id);
    const stream = call.stream;
    if (!stream || stream.closeCode !== undefined) return;
    stream.hangUp();
    await stream.closed;
    await this.event(id, "streaming.stopped");
  }

  /** A webhook as Telnyx sends it: JSON, signed over `${timestamp}|${body}` with the account's key. */
  private async send(publicUrl: string, data: Record<string, unknown>, options: WebhookSendOptions): Promise<SentWebhook> {
    const rawBody = JSON.stringify({ data, meta: { attempt: 1, delivered_to: publicUrl } });
    const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
    const signature = sign(null, Buffer.from(`${timestamp}|${rawBody}`, "utf8"), options.signWith ?? this.privateKey).toString("base64");
    const target = this.rewrite(publicUrl);
    assertLoopback(target, "Telnyx");
    const response = await fetch(target, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/json",
        "user-agent": "telnyx-webhooks",
        ...(options.unsigned ? {} : { "telnyx-signature-ed25519": signature, "telnyx-timestamp": timestamp }),
      },
      body: rawBody,
    });
    const sent: SentWebhook = { url: publicUrl, eventType: String(data.event_type), rawBody, body: JSON.parse(rawBody), timestamp, signature, status: response.status, response: await response.text() };
    this.webhooks.push(sent);
    return sent;
  }

  /** Opens the stream the call asked for, then `streaming.started`; on failure `streaming.failed` and the error. */
  private async openStream(call: TelnyxStandInCall): Promise<TelnyxMediaClient | undefined> {
    if (!call.streamUrl) return undefined;
    try {
      const stream = await this.connectStream(call.streamUrl, { callControlId: call.callControlId });
      call.streamError = undefined;
      await this.event(call.callControlId, "streaming.started");
      return stream;
    } catch (e) {
      call.streamError = e as Error;
      await this.event(call.callControlId, "streaming.failed", { failure_reason: "connection_failed", stream_type: "websocket", stream_params: { stream_url: call.streamUrl, track: call.streamTrack ?? "inbound_track" } });
      throw e;
    }
  }

  private newCall(direction: TelnyxDirection, from: string, to: string, connectionId: string, webhookUrl: string | undefined, params: Record<string, unknown>): TelnyxStandInCall {
    const call: TelnyxStandInCall = {
      callControlId: callControlId(),
      callLegId: randomUUID(),
      callSessionId: randomUUID(),
      connectionId,
      direction,
      from,
      to,
      state: direction === "incoming" ? "parked" : "bridging",
      webhookUrl,
      clientState: null,
      params,
      streamUrl: undefined,
      streamTrack: undefined,
      streamAuthToken: undefined,
      commands: [],
      transferredTo: undefined,
      hangupCause: undefined,
      webhooks: [],
      stream: undefined,
      streamError: undefined,
      startTime: new Date(),
      answerTime: undefined,
      endTime: undefined,
    };
    this.calls.set(call.callControlId, call);
    return call;
  }

  // ---- Telnyx's Call Control API ----------------------------------------------------------------

  protected serve(req: http.IncomingMessage, text: string, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", this.base);
    let body: unknown = undefined;
    const answer = (status: number, json: unknown, after?: () => void) => {
      this.requests.push({ method: req.method ?? "", path: url.pathname, body, status });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(json), after);
    };
    try {
      if (req.headers.authorization !== `Bearer ${this.apiKey}`) throw new TelnyxError(401, "10009", "Authentication failed", "The required authentication headers were either invalid or not included in the request.");
      const failure = this.failures.shift();
      if (failure) throw new TelnyxError(failure, "10007", "Unexpected error", "An unexpected error occured.");
      if (req.method !== "POST") throw notFound();
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        throw badRequest("The request body is not valid JSON.");
      }
      if (body === null || typeof body !== "object" || Array.isArray(body)) throw badRequest("The request body must be a JSON object.");
      const params = body as Record<string, unknown>;
      if (url.pathname === "/v2/calls") {
        const call = this.dial(params);
        return answer(200, { data: this.callData(call) }, () => {
          if (this.autoEvents && call.webhookUrl) this.inBackground(() => this.event(call.callControlId, "call.initiated"));
        });
      }
      const route = /^\/v2\/calls\/([^/]+)\/actions\/([a-z_]+)$/.exec(url.pathname);
      if (!route || !ACTIONS.has(route[2]!)) throw notFound();
      const call = this.calls.get(decodeURIComponent(route[1]!));
      if (!call) throw notFound();
      const after = this.command(call, route[2]!, params);
      return answer(200, { data: { result: "ok" } }, () => {
        if (after && this.autoEvents) this.inBackground(after);
      });
    } catch (e) {
      const error = e instanceof TelnyxError ? e : new TelnyxError(500, "10007", "Unexpected error", `stand-in failure: ${(e as Error).message}`);
      return answer(error.status, error.body());
    }
  }

  private dial(params: Record<string, unknown>): TelnyxStandInCall {
    for (const name of ["connection_id", "to", "from"]) if (typeof params[name] !== "string" || params[name] === "") throw missing(name);
    if (this.connectionId !== undefined && params.connection_id !== this.connectionId) throw badRequest("Invalid connection_id: no such Call Control application.", "/connection_id");
    const clientState = this.clientStateOf(params);
    const webhookUrl = optionalString(params, "webhook_url") ?? this.webhookUrl;
    const call = this.newCall("outgoing", params.from as string, params.to as string, params.connection_id as string, webhookUrl, params);
    if (clientState !== undefined) call.clientState = clientState;
    this.takeStream(call, params);
    call.commands.push({ action: "dial", body: params, at: new Date() });
    return call;
  }

  /** Checks and records a command; returns the background work it causes (webhooks, streams), if any. */
  private command(call: TelnyxStandInCall, action: string, params: Record<string, unknown>): (() => Promise<unknown>) | undefined {
    if (call.state === "ended") throw ended();
    const commandId = optionalString(params, "command_id");
    const seen = this.commandIds.get(call.callControlId) ?? new Set<string>();
    this.commandIds.set(call.callControlId, seen);
    // Telnyx ignores a command whose command_id the call has already had.
    if (commandId !== undefined && seen.has(commandId)) return undefined;
    const clientState = this.clientStateOf(params);
    if (action === "answer" && (call.direction !== "incoming" || call.state !== "parked")) throw badRequest("Only a parked incoming call can be answered.");
    if (action === "reject" && (call.direction !== "incoming" || call.state !== "parked")) throw badRequest("Only a parked incoming call can be rejected.");
    if (action === "reject" && params.cause !== "CALL_REJECTED" && params.cause !== "USER_BUSY") throw missing("cause");
    if (action === "transfer" && (typeof params.to !== "string" || params.to === "")) throw missing("to");
    if (action === "streaming_start" && (typeof params.stream_url !== "string" || params.stream_url === "")) throw missing("stream_url");
    if (commandId !== undefined) seen.add(commandId);
    if (clientState !== undefined) call.clientState = clientState;
    call.commands.push({ action, body: params, at: new Date() });
    const id = call.callControlId;
    switch (action) {
      case "answer":
        this.takeStream(call, params);
        call.state = "answered";
        call.answerTime = new Date();
        return async () => {
          await this.event(id, "call.answered");
          await this.openStream(call);
        };
      case "streaming_start":
        this.takeStream(call, params);
        return () => this.openStream(call);
      case "streaming_stop":
        return () => this.endStream(id);
      case "transfer":
        call.transferredTo = params.to as string;
        return undefined;
      case "reject": {
        const cause: TelnyxHangupCause = params.cause === "USER_BUSY" ? "user_busy" : "call_rejected";
        call.state = "ended";
        call.endTime = new Date();
        call.hangupCause = cause;
        return () => this.event(id, "call.hangup", { hangup_cause: cause, hangup_source: "callee" });
      }
      default: {
        // hangup: the application ended the call, so the source is this side.
        call.state = "ended";
        call.endTime = new Date();
        call.hangupCause = "normal_clearing";
        return async () => {
          await this.endStream(id);
          await this.event(id, "call.hangup", { hangup_cause: "normal_clearing", hangup_source: call.direction === "outgoing" ? "caller" : "callee" });
        };
      }
    }
  }

  /** The stream settings a dial, answer or streaming_start carries. */
  private takeStream(call: TelnyxStandInCall, params: Record<string, unknown>): void {
    const streamUrl = optionalString(params, "stream_url");
    if (streamUrl === undefined) return;
    if (!/^wss?:\/\//.test(streamUrl)) throw badRequest("stream_url must be a ws:// or wss:// URL.", "/stream_url");
    call.streamUrl = streamUrl;
    call.streamTrack = optionalString(params, "stream_track") ?? "inbound_track";
    call.streamAuthToken = optionalString(params, "stream_auth_token");
  }

  /** `client_state` must be base64 (Telnyx refuses anything else); undefined when not given. */
  private clientStateOf(params: Record<string, unknown>): string | undefined {
    const value = params.client_state;
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || !BASE64.test(value)) throw badRequest("client_state must be a valid Base-64 encoded string.", "/client_state");
    return value;
  }

  private callData(call: TelnyxStandInCall): Record<string, unknown> {
    return {
      call_control_id: call.callControlId,
      call_leg_id: call.callLegId,
      call_session_id: call.callSessionId,
      is_alive: false,
      record_type: "call",
      ...(call.clientState ? { client_state: call.clientState } : {}),
    };
  }
}

function optionalString(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}
