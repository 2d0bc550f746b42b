import { randomBytes } from "node:crypto";
import http from "node:http";
import twilio from "twilio";
import { TwilioMediaClient } from "./media-client.js";
import { readConnectStream, readDial } from "./twiml-read.js";
import { assertLoopback, StandInServer } from "./standin-server.js";

/**
 * A stand-in for Twilio on 127.0.0.1, for carrier tests that run offline. It speaks Twilio's
 * wire protocol on both sides:
 * - its REST API (the 2010-04-01 Calls and IncomingPhoneNumbers resources) with basic auth
 *   (AccountSid:AuthToken) and Twilio's JSON errors, recording every call created and update;
 * - as Twilio towards the application, driven by the test: status callbacks and the voice
 *   webhook, form-encoded and signed with `X-Twilio-Signature` by the twilio library itself, and
 *   the media stream a `<Connect><Stream>` asks for (TwilioMediaClient, a real WebSocket).
 * As Twilio does, hanging up a call through the API ends its stream (`stop`, then close) and sends
 * the final status callback, and a redirect ends the stream; `idle()` waits for that background work.
 * URLs the application gives (public, https/wss) are signed as given and reached through
 * `rewrite`, which must map them to loopback: the stand-in refuses any other address.
 */

/** A call's status: the resource's values plus `initiated`, which only status callbacks carry. */
export type TwilioCallStatus = "queued" | "initiated" | "ringing" | "in-progress" | "busy" | "no-answer" | "failed" | "completed" | "canceled";

/** Form parameters as received: a name sent more than once (StatusCallbackEvent) gives an array. */
export type FormParams = Record<string, string | string[]>;

/** One request the stand-in sent to the application, and what it answered. */
export interface SentRequest {
  /** The public URL, the one signed. */
  url: string;
  method: "GET" | "POST";
  params: Record<string, string>;
  signature: string;
  status: number;
  body: string;
}

export interface StandInCall {
  sid: string;
  direction: "outbound-api" | "inbound";
  to: string;
  from: string;
  status: TwilioCallStatus;
  /** The create request's parameters (for an inbound call, the voice webhook's). */
  params: FormParams;
  /** The TwiML it runs: the create's `Twiml`, or what `Url` answered, or the last redirect's. */
  twiml: string | undefined;
  url: string | undefined;
  method: string;
  statusCallback: string | undefined;
  statusCallbackMethod: "GET" | "POST";
  /** The events asked for (StatusCallbackEvent); `completed` is sent whatever they are. */
  statusCallbackEvents: string[];
  machineDetection: string | undefined;
  /** Every update request's parameters, in order. */
  updates: FormParams[];
  /** What the last TwiML redirect `<Dial>`s, if it does. */
  dialed: string | undefined;
  /** The status callbacks sent, in order. */
  callbacks: SentRequest[];
  stream: TwilioMediaClient | undefined;
  createdAt: Date;
  updatedAt: Date;
  startTime: Date | undefined;
  endTime: Date | undefined;
}

export interface StandInNumber {
  sid: string;
  phoneNumber: string;
  voiceUrl: string | null;
  voiceMethod: string;
  statusCallback: string | null;
  statusCallbackMethod: string;
  /** Every update request's parameters, in order. */
  updates: FormParams[];
}

/** One REST request the stand-in answered. */
export interface ApiRequest {
  method: string;
  path: string;
  query: string;
  params: FormParams;
  status: number;
}

export interface TwilioStandInOptions {
  accountSid?: string;
  authToken?: string;
  /** Maps a public URL the application gave (https://, wss://) to the loopback one to reach. */
  rewrite?: (url: string) => string;
}

const API_VERSION = "2010-04-01";
const FINAL: ReadonlySet<TwilioCallStatus> = new Set(["busy", "no-answer", "failed", "completed", "canceled"]);
const LIVE: ReadonlySet<TwilioCallStatus> = new Set(["queued", "initiated", "ringing", "in-progress"]);
/** The StatusCallbackEvent that subscribes to a CallStatus; final statuses are always sent. */
const EVENT_OF: Partial<Record<TwilioCallStatus, string>> = { initiated: "initiated", ringing: "ringing", "in-progress": "answered" };

const sid = (prefix: string) => prefix + randomBytes(16).toString("hex");
const rfc2822 = (d: Date | undefined) => (d ? d.toUTCString().replace("GMT", "+0000") : null);
const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

function formParams(text: string): FormParams {
  const out: FormParams = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const had = out[key];
    out[key] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

class TwilioError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class TwilioStandIn extends StandInServer<StandInCall> {
  protected readonly carrier = "Twilio";
  readonly accountSid: string;
  readonly authToken: string;
  readonly numbers = new Map<string, StandInNumber>();
  readonly requests: ApiRequest[] = [];
  rewrite: (url: string) => string;
  /** Streams already pumping frames in real time (one pump each). */
  private pacing = new WeakSet<TwilioMediaClient>();

  constructor(options: TwilioStandInOptions = {}) {
    super();
    this.accountSid = options.accountSid ?? sid("AC");
    this.authToken = options.authToken ?? randomBytes(16).toString("hex");
    this.rewrite = options.rewrite ?? ((url) => url);
  }

  /** A number the account owns: the only numbers calls may come `From`, and IncomingPhoneNumbers' list. */
  addNumber(phoneNumber: string, voiceUrl: string | null = null): StandInNumber {
    const number: StandInNumber = { sid: sid("PN"), phoneNumber, voiceUrl, voiceMethod: "POST", statusCallback: null, statusCallbackMethod: "POST", updates: [] };
    this.numbers.set(number.sid, number);
    return number;
  }

  /** The only call created through the API so far (throws when there are none or several). */
  onlyCall(): StandInCall {
    const outbound = [...this.calls.values()].filter((c) => c.direction === "outbound-api");
    if (outbound.length !== 1) throw new Error(`expected one call created at the Twilio stand-in, got ${outbound.length}`);
    return outbound[0]!;
  }

  // ---- Twilio towards the application --------------------------------------------------------

  /**
   * Sends the call's status callback for `status`, as Twilio does: only when the call asked for
   * the event (StatusCallbackEvent: initiated, ringing, answered; a final status always goes),
   * else resolves to undefined. Moves the call's status. `extra` adds or overrides parameters.
   */
  async statusCallback(callSid: string, status: TwilioCallStatus, extra: Record<string, string> = {}): Promise<SentRequest | undefined> {
    const call = this.call(callSid);
    const now = new Date();
    if (status === "in-progress") call.startTime ??= now;
    if (FINAL.has(status)) call.endTime ??= now;
    if (status !== "initiated") call.status = status;
    call.updatedAt = now;
    const event = EVENT_OF[status];
    if (!call.statusCallback || (event && !call.statusCallbackEvents.includes(event))) return undefined;
    const params: Record<string, string> = {
      ...this.callParams(call),
      CallStatus: status,
      CallbackSource: "call-progress-events",
      Timestamp: rfc2822(now)!,
      SequenceNumber: String(call.callbacks.length),
    };
    if (FINAL.has(status)) {
      const seconds = call.startTime ? String(Math.round((call.endTime!.getTime() - call.startTime.getTime()) / 1000)) : "0";
      params.CallDuration = seconds;
      params.Duration = String(Math.ceil(Number(seconds) / 60));
    }
    const sent = await this.send(call.statusCallback, call.statusCallbackMethod, { ...params, ...extra });
    call.callbacks.push(sent);
    return sent;
  }

  /**
   * The voice webhook of a call coming in to `to`: POST to `voiceUrl` (public; reached through
   * `rewrite`), signed. Records the call (inbound, ringing) so the API and callbacks know it.
   */
  async incomingCall(voiceUrl: string, caller: { from: string; to: string; method?: "GET" | "POST"; extra?: Record<string, string> }): Promise<{ callSid: string; status: number; twiml: string; contentType: string }> {
    const number = [...this.numbers.values()].find((n) => n.phoneNumber === caller.to);
    const now = new Date();
    const call: StandInCall = {
      sid: sid("CA"),
      direction: "inbound",
      to: caller.to,
      from: caller.from,
      status: "ringing",
      params: {},
      twiml: undefined,
      url: voiceUrl,
      method: caller.method ?? "POST",
      statusCallback: number?.statusCallback ?? undefined,
      statusCallbackMethod: number?.statusCallbackMethod === "GET" ? "GET" : "POST",
      statusCallbackEvents: ["completed"],
      machineDetection: undefined,
      updates: [],
      dialed: undefined,
      callbacks: [],
      stream: undefined,
      createdAt: now,
      updatedAt: now,
      startTime: undefined,
      endTime: undefined,
    };
    this.calls.set(call.sid, call);
    const params = { ...this.callParams(call), CallStatus: "ringing", ...caller.extra };
    call.params = params;
    const sent = await this.send(voiceUrl, call.method === "GET" ? "GET" : "POST", params);
    if (sent.status >= 200 && sent.status < 300) call.twiml = sent.body;
    return { callSid: call.sid, status: sent.status, twiml: sent.body, contentType: sent.contentType };
  }

  /**
   * The TwiML an outbound call runs once answered: its inline `Twiml`, or what its `Url` answers
   * to Twilio's signed request (CallStatus in-progress; AnsweredBy when it asked for machine
   * detection). Throws when the application does not answer 2xx (Twilio would fail the call).
   */
  async twimlOf(callSid: string, answeredBy?: string): Promise<string> {
    const call = this.call(callSid);
    if (call.twiml !== undefined) return call.twiml;
    if (!call.url) throw new Error(`call ${callSid} has neither Twiml nor Url`);
    const params: Record<string, string> = { ...this.callParams(call), CallStatus: "in-progress" };
    if (call.machineDetection && answeredBy) params.AnsweredBy = answeredBy;
    const sent = await this.send(call.url, call.method === "GET" ? "GET" : "POST", params);
    if (sent.status < 200 || sent.status >= 300) throw new Error(`the call's Url answered ${sent.status}: ${sent.body.slice(0, 200)}`);
    call.twiml = sent.body;
    return sent.body;
  }

  /**
   * The callee picks up: the `in-progress` status callback (when asked for; with AnsweredBy when
   * the call asked for machine detection), then the call's TwiML, whose `<Connect><Stream>` is
   * opened. Resolves with the media stream once `connected` and `start` are sent.
   */
  async answer(callSid: string, options: { answeredBy?: string } = {}): Promise<TwilioMediaClient> {
    const call = this.call(callSid);
    const extra: Record<string, string> = call.machineDetection && options.answeredBy ? { AnsweredBy: options.answeredBy } : {};
    await this.statusCallback(callSid, "in-progress", extra);
    return this.connectStream(await this.twimlOf(callSid, options.answeredBy), { callSid });
  }

  /**
   * Runs a TwiML `<Connect><Stream>` as Twilio's media server: a WebSocket to the stream URL
   * (reached through `rewrite`; the upgrade signed over the public URL), then `connected` and
   * `start` with the `<Parameter>`s as customParameters. With `callSid`, the stream belongs to
   * that call (its sids in `start`; ended when the call is hung up or redirected).
   */
  async connectStream(twiml: string, options: { callSid?: string; rewrite?: (url: string) => string } = {}): Promise<TwilioMediaClient> {
    const { url, parameters } = readConnectStream(twiml);
    const target = (options.rewrite ?? this.rewrite)(url);
    assertLoopback(target, "Twilio");
    const call = options.callSid ? this.call(options.callSid) : undefined;
    if (call) call.status = "in-progress";
    const signature = twilio.getExpectedTwilioSignature(this.authToken, url, {});
    const client = await TwilioMediaClient.connect(target, parameters, { callSid: call?.sid, accountSid: this.accountSid }, { "X-Twilio-Signature": signature });
    if (call) call.stream = client;
    return client;
  }

  /** Streams 8 kHz PCM into the call's media stream: paced in real time, or all at once. */
  async play(callSid: string, samples: Int16Array, options: { realTime?: boolean } = {}): Promise<void> {
    const stream = this.call(callSid).stream;
    if (!stream) throw new Error(`call ${callSid} has no media stream`);
    if (!options.realTime) return stream.sendUnpaced(samples);
    if (!this.pacing.has(stream)) stream.startStreaming();
    this.pacing.add(stream);
    await stream.speak(samples);
  }

  /** The far end hangs up: the stream gets `stop` and closes, then the `completed` callback goes. */
  async hangUpRemote(callSid: string): Promise<SentRequest | undefined> {
    await this.endStream(callSid);
    return this.statusCallback(callSid, "completed");
  }

  /** Sends `stop` on the call's stream and closes it, as Twilio does when the call leaves `<Connect>`. */
  async endStream(callSid: string): Promise<void> {
    const stream = this.call(callSid).stream;
    if (!stream) return;
    stream.hangUp();
    stream.close();
    await stream.closed;
  }

  /** The parameters Twilio puts in every request about a call. */
  private callParams(call: StandInCall): Record<string, string> {
    return {
      AccountSid: this.accountSid,
      ApiVersion: API_VERSION,
      CallSid: call.sid,
      Called: call.to,
      Caller: call.from,
      Direction: call.direction,
      From: call.from,
      To: call.to,
    };
  }

  /** A request as Twilio makes it: form-encoded (query for GET), signed over the public URL. */
  private async send(publicUrl: string, method: "GET" | "POST", params: Record<string, string>): Promise<SentRequest & { contentType: string }> {
    let signedUrl = publicUrl;
    let body: string | undefined;
    if (method === "GET") {
      const u = new URL(publicUrl);
      for (const [k, v] of Object.entries(params)) u.searchParams.append(k, v);
      signedUrl = u.toString();
    } else body = new URLSearchParams(params).toString();
    const signature = twilio.getExpectedTwilioSignature(this.authToken, signedUrl, method === "GET" ? {} : params);
    const target = this.rewrite(signedUrl);
    assertLoopback(target, "Twilio");
    const response = await fetch(target, {
      method,
      redirect: "manual",
      headers: {
        "user-agent": "TwilioProxy/1.1",
        "x-twilio-signature": signature,
        ...(body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
      },
      body,
    });
    return { url: publicUrl, method, params, signature, status: response.status, body: await response.text(), contentType: response.headers.get("content-type") ?? "" };
  }

  // ---- Twilio's REST API ------------------------------------------------------------------------

  protected serve(req: http.IncomingMessage, text: string, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", this.base);
    const params = req.method === "POST" ? formParams(text) : formParams(url.search);
    const answer = (status: number, json: unknown) => {
      this.requests.push({ method: req.method ?? "", path: url.pathname, query: url.search, params, status });
      res.writeHead(status, { "content-type": "application/json", ...(status === 401 ? { "www-authenticate": 'Basic realm="Twilio API"' } : {}) });
      res.end(JSON.stringify(json));
    };
    const error = (e: TwilioError) => answer(e.status, { code: e.code, message: e.message, more_info: `https://www.twilio.com/docs/errors/${e.code}`, status: e.status });
    try {
      const route = /^\/2010-04-01\/Accounts\/([^/]+)\/(Calls|IncomingPhoneNumbers)(?:\/([^/]+))?\.json$/.exec(url.pathname);
      if (!this.authorized(req.headers.authorization, route?.[1])) throw new TwilioError(401, 20003, "Authenticate");
      const failure = this.failures.shift();
      if (failure) throw new TwilioError(failure, failure === 503 ? 20503 : 20500, failure === 503 ? "Service Unavailable" : "Internal Server Error");
      const notFound = new TwilioError(404, 20404, `The requested resource ${url.pathname} was not found`);
      if (!route) throw notFound;
      const [, , resource, id] = route;
      if (resource === "Calls") {
        if (!id && req.method === "POST") return answer(201, this.callJson(this.createCall(params)));
        const call = id ? this.calls.get(id) : undefined;
        if (!call) throw notFound;
        if (req.method === "GET") return answer(200, this.callJson(call));
        if (req.method === "POST") return answer(200, this.callJson(this.updateCall(call, params)));
      } else {
        if (!id && req.method === "GET") {
          const wanted = (first(params.PhoneNumber) ?? "").replace(/[^\d]/g, "");
          const list = [...this.numbers.values()].filter((n) => !wanted || n.phoneNumber.replace(/[^\d]/g, "").includes(wanted));
          return answer(200, this.numbersPage(list, url));
        }
        const number = id ? this.numbers.get(id) : undefined;
        if (!number) throw notFound;
        if (req.method === "GET") return answer(200, this.numberJson(number));
        if (req.method === "POST") return answer(200, this.numberJson(this.updateNumber(number, params)));
      }
      throw new TwilioError(405, 20004, "Method not allowed");
    } catch (e) {
      if (e instanceof TwilioError) return error(e);
      return error(new TwilioError(500, 20500, `stand-in failure: ${(e as Error).message}`));
    }
  }

  private authorized(header: string | undefined, pathAccount: string | undefined): boolean {
    const m = /^Basic (.+)$/i.exec(header ?? "");
    if (!m) return false;
    const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
    return colon > 0 && user === this.accountSid && password === this.authToken && (pathAccount === undefined || pathAccount === this.accountSid);
  }

  private createCall(params: FormParams): StandInCall {
    const to = first(params.To);
    const from = first(params.From);
    const twiml = first(params.Twiml);
    const url = first(params.Url);
    if (!to) throw new TwilioError(400, 21201, "No 'To' number is specified");
    if (!from) throw new TwilioError(400, 21603, "A 'From' phone number is required.");
    if (twiml === undefined && !url) throw new TwilioError(400, 21205, "Url parameter is required.");
    if (twiml !== undefined && twiml.length > 4000) throw new TwilioError(400, 32018, "Twiml size exceeded maximum allowed value of 4000 characters");
    if (![...this.numbers.values()].some((n) => n.phoneNumber === from)) {
      throw new TwilioError(400, 21210, `The source phone number provided, ${from}, is not yet verified for your account. You may only make calls from phone numbers that you've verified or purchased from Twilio.`);
    }
    const events = params.StatusCallbackEvent;
    const now = new Date();
    const call: StandInCall = {
      sid: sid("CA"),
      direction: "outbound-api",
      to,
      from,
      status: "queued",
      params,
      twiml,
      url,
      method: first(params.Method)?.toUpperCase() ?? "POST",
      statusCallback: first(params.StatusCallback),
      statusCallbackMethod: first(params.StatusCallbackMethod)?.toUpperCase() === "GET" ? "GET" : "POST",
      // Twilio accepts the events space-separated in one value as well as repeated.
      statusCallbackEvents: events === undefined ? ["completed"] : (Array.isArray(events) ? events : [events]).flatMap((e) => e.split(/\s+/)).filter(Boolean),
      machineDetection: first(params.MachineDetection),
      updates: [],
      dialed: undefined,
      callbacks: [],
      stream: undefined,
      createdAt: now,
      updatedAt: now,
      startTime: undefined,
      endTime: undefined,
    };
    this.calls.set(call.sid, call);
    return call;
  }

  /**
   * `Status=completed` hangs up (a queued or ringing call too), `Status=canceled` cancels a call
   * not yet answered, `Twiml`/`Url` redirects a live call: each records the update, and ending
   * or redirecting ends the stream and (hang-up) sends the final callback in the background.
   */
  private updateCall(call: StandInCall, params: FormParams): StandInCall {
    const status = first(params.Status);
    const twiml = first(params.Twiml);
    const url = first(params.Url);
    if (status !== undefined && status !== "completed" && status !== "canceled") throw new TwilioError(400, 21218, `Invalid Status: ${status}`);
    if ((twiml !== undefined || url) && !LIVE.has(call.status)) throw new TwilioError(400, 21220, "Call is not in-progress. Cannot redirect.");
    if (twiml !== undefined && twiml.length > 4000) throw new TwilioError(400, 32018, "Twiml size exceeded maximum allowed value of 4000 characters");
    call.updates.push(params);
    call.updatedAt = new Date();
    const ends = LIVE.has(call.status) && (status === "completed" || (status === "canceled" && call.status !== "in-progress"));
    if (ends) {
      const final = status as TwilioCallStatus;
      call.status = final;
      call.endTime = new Date();
      this.inBackground(async () => {
        await this.endStream(call.sid);
        await this.statusCallback(call.sid, final);
      });
    } else if (twiml !== undefined || url) {
      call.twiml = twiml;
      call.url = url ?? call.url;
      call.method = first(params.Method)?.toUpperCase() ?? "POST";
      call.dialed = twiml !== undefined ? readDial(twiml) : undefined;
      this.inBackground(() => this.endStream(call.sid));
    }
    return call;
  }

  private updateNumber(number: StandInNumber, params: FormParams): StandInNumber {
    number.updates.push(params);
    const voiceUrl = first(params.VoiceUrl);
    if (voiceUrl !== undefined) number.voiceUrl = voiceUrl || null;
    const voiceMethod = first(params.VoiceMethod);
    if (voiceMethod) number.voiceMethod = voiceMethod.toUpperCase();
    const statusCallback = first(params.StatusCallback);
    if (statusCallback !== undefined) number.statusCallback = statusCallback || null;
    const statusCallbackMethod = first(params.StatusCallbackMethod);
    if (statusCallbackMethod) number.statusCallbackMethod = statusCallbackMethod.toUpperCase();
    return number;
  }

  private callJson(call: StandInCall): Record<string, unknown> {
    const uri = `/${API_VERSION}/Accounts/${this.accountSid}/Calls/${call.sid}.json`;
    const duration = call.startTime && call.endTime ? String(Math.round((call.endTime.getTime() - call.startTime.getTime()) / 1000)) : null;
    return {
      sid: call.sid,
      account_sid: this.accountSid,
      api_version: API_VERSION,
      annotation: null,
      answered_by: null,
      caller_name: null,
      date_created: rfc2822(call.createdAt),
      date_updated: rfc2822(call.updatedAt),
      direction: call.direction,
      duration,
      end_time: rfc2822(call.endTime),
      forwarded_from: null,
      from: call.from,
      from_formatted: call.from,
      group_sid: null,
      parent_call_sid: null,
      phone_number_sid: [...this.numbers.values()].find((n) => n.phoneNumber === (call.direction === "inbound" ? call.to : call.from))?.sid ?? null,
      price: null,
      price_unit: "USD",
      queue_time: "0",
      start_time: rfc2822(call.startTime),
      status: call.status === "initiated" ? "queued" : call.status,
      subresource_uris: {
        notifications: uri.replace(".json", "/Notifications.json"),
        recordings: uri.replace(".json", "/Recordings.json"),
        events: uri.replace(".json", "/Events.json"),
      },
      to: call.to,
      to_formatted: call.to,
      trunk_sid: null,
      uri,
    };
  }

  private numberJson(number: StandInNumber): Record<string, unknown> {
    return {
      sid: number.sid,
      account_sid: this.accountSid,
      api_version: API_VERSION,
      friendly_name: number.phoneNumber,
      phone_number: number.phoneNumber,
      voice_url: number.voiceUrl,
      voice_method: number.voiceMethod,
      voice_fallback_url: null,
      voice_fallback_method: "POST",
      voice_caller_id_lookup: false,
      voice_application_sid: null,
      status_callback: number.statusCallback ?? "",
      status_callback_method: number.statusCallbackMethod,
      capabilities: { voice: true, sms: true, mms: true, fax: false },
      status: "in-use",
      uri: `/${API_VERSION}/Accounts/${this.accountSid}/IncomingPhoneNumbers/${number.sid}.json`,
    };
  }

  private numbersPage(list: StandInNumber[], url: URL): Record<string, unknown> {
    const uri = url.pathname + url.search;
    return {
      incoming_phone_numbers: list.map((n) => this.numberJson(n)),
      page: 0,
      page_size: 50,
      start: 0,
      end: Math.max(0, list.length - 1),
      first_page_uri: uri,
      next_page_uri: null,
      previous_page_uri: null,
      uri,
    };
  }
}
