/**
 * The slice of Twilio's REST API (2010-04-01) Parley uses: create, hang up and redirect calls,
 * and point a number's voice webhook at Parley. Plain `fetch`, HTTP basic auth with the account
 * SID and auth token, form-encoded bodies with Twilio's own field names. Failures are
 * CarrierApiError (carrier-http.ts).
 */
import { CarrierApiError, carrierRequest, DEFAULT_CARRIER_TIMEOUT_MS, scrub } from "../carrier-http.js";

/** Twilio's events a status callback can be asked for (`completed` is sent whatever is asked). */
export type TwilioStatusCallbackEvent = "initiated" | "ringing" | "answered" | "completed";

export interface TwilioApiOptions {
  accountSid: string;
  authToken: string;
  /** PARLEY_TWILIO_API_URL: `https://api.twilio.com`, or a stand-in on loopback in tests. */
  apiUrl: string;
  /** Each request, answer body included, is given up after this long (status 0). Default 10 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface CreateCallRequest {
  to: string;
  from: string;
  /** TwiML run once the call is answered (Twilio refuses more than 4000 characters). */
  twiml: string;
  statusCallback: string;
  statusCallbackEvents: readonly TwilioStatusCallbackEvent[];
  /** Answering-machine detection, as Twilio spells it: `Enable` or `DetectMessageEnd`. */
  machineDetection?: "Enable" | "DetectMessageEnd";
  /** How long Twilio lets it ring, in seconds. */
  timeoutSeconds?: number;
}

export interface UpdateCallRequest {
  /** `completed` hangs up (a call not yet answered too); `canceled` cancels one not yet answered. */
  status?: "completed" | "canceled";
  /** Redirects the live call to this TwiML (its current stream ends). */
  twiml?: string;
}

/** A call at Twilio, as far as Parley needs it. */
export interface TwilioCall {
  sid: string;
  status: string;
}

/** One of the account's phone numbers (an IncomingPhoneNumber). */
export interface TwilioIncomingNumber {
  sid: string;
  phoneNumber: string;
  /** Where Twilio sends the voice webhook; null when unset. */
  voiceUrl: string | null;
}

const API_VERSION = "2010-04-01";

/** A Twilio account SID: AC and 32 hex digits. */
export const ACCOUNT_SID = /^AC[0-9a-fA-F]{32}$/;
const CALL_SID = /^CA[0-9a-fA-F]{32}$/;
const NUMBER_SID = /^PN[0-9a-fA-F]{32}$/;

type Form = Record<string, string | readonly string[] | undefined>;

export class TwilioApi {
  private readonly accountSid: string;
  private readonly authToken: string;
  private readonly apiUrl: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: TwilioApiOptions) {
    this.accountSid = options.accountSid;
    this.authToken = options.authToken;
    this.apiUrl = options.apiUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CARRIER_TIMEOUT_MS;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Places a call (`POST Calls.json`) that runs `twiml` once answered and reports its progress to `statusCallback`. */
  async createCall(request: CreateCallRequest): Promise<TwilioCall> {
    const body = await this.request("POST", "Calls.json", {
      To: request.to,
      From: request.from,
      Twiml: request.twiml,
      StatusCallback: request.statusCallback,
      StatusCallbackMethod: "POST",
      StatusCallbackEvent: request.statusCallbackEvents,
      MachineDetection: request.machineDetection,
      Timeout: request.timeoutSeconds === undefined ? undefined : String(request.timeoutSeconds),
    });
    return callOf(body);
  }

  /** Hangs up, cancels or redirects the call `callSid` (`POST Calls/{sid}.json`). */
  async updateCall(callSid: string, update: UpdateCallRequest): Promise<TwilioCall> {
    checkSid(callSid, CALL_SID, "call");
    if (update.status !== undefined && update.status !== "completed" && update.status !== "canceled") {
      throw new CarrierApiError(0, undefined, "a call's status can only be updated to completed or canceled");
    }
    if (update.status === undefined && update.twiml === undefined) throw new CarrierApiError(0, undefined, "a call update needs a status or TwiML");
    const body = await this.request("POST", `Calls/${callSid}.json`, { Status: update.status, Twiml: update.twiml });
    return callOf(body);
  }

  /** The account's number `phoneNumber` (E.164, matched exactly), or undefined when the account has no such number. */
  async findIncomingNumber(phoneNumber: string): Promise<TwilioIncomingNumber | undefined> {
    const body = await this.request("GET", `IncomingPhoneNumbers.json?${new URLSearchParams({ PhoneNumber: phoneNumber })}`);
    const list = (body as { incoming_phone_numbers?: unknown }).incoming_phone_numbers;
    if (!Array.isArray(list)) throw unexpected("a list of incoming phone numbers");
    // Twilio's PhoneNumber filter is a pattern match: keep only the number asked for.
    const found = list.map(numberOf).find((n) => n.phoneNumber === phoneNumber);
    return found;
  }

  /** Points the number's voice webhook at `url`, requested with POST (`POST IncomingPhoneNumbers/{sid}.json`). */
  async setVoiceUrl(numberSid: string, url: string): Promise<TwilioIncomingNumber> {
    checkSid(numberSid, NUMBER_SID, "phone number");
    const body = await this.request("POST", `IncomingPhoneNumbers/${numberSid}.json`, { VoiceUrl: url, VoiceMethod: "POST" });
    return numberOf(body);
  }

  /** One request under the account; the parsed JSON of a 2xx answer, else a CarrierApiError. */
  private async request(method: "GET" | "POST", path: string, form?: Form): Promise<unknown> {
    const url = `${this.accountBase()}/${path}`;
    let body: URLSearchParams | undefined;
    if (form) {
      body = new URLSearchParams();
      for (const [name, value] of Object.entries(form)) {
        if (value === undefined) continue;
        // A list (StatusCallbackEvent) is the same name repeated, as Twilio's libraries send it.
        for (const one of typeof value === "string" ? [value] : value) body.append(name, one);
      }
    }
    const { status, json } = await carrierRequest({
      carrier: "Twilio",
      urlSetting: "PARLEY_TWILIO_API_URL",
      method,
      url,
      headers: {
        authorization: "Basic " + Buffer.from(`${this.accountSid}:${this.authToken}`, "utf8").toString("base64"),
        accept: "application/json",
        ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body,
      timeoutMs: this.timeoutMs,
      fetch: this.fetch,
      secrets: [this.authToken],
    });
    if (status < 200 || status > 299) {
      const error = (json ?? {}) as { code?: unknown; message?: unknown; more_info?: unknown };
      const message = typeof error.message === "string" && error.message ? error.message : `Twilio answered HTTP ${status}`;
      const secrets = [this.authToken];
      throw new CarrierApiError(status, typeof error.code === "number" ? error.code : undefined, scrub(message, secrets), typeof error.more_info === "string" ? scrub(error.more_info, secrets) : undefined);
    }
    if (json === null || typeof json !== "object") throw new CarrierApiError(status, undefined, `Twilio answered HTTP ${status} without a JSON object`);
    return json;
  }

  /** `{apiUrl}/2010-04-01/Accounts/{sid}`, once the settings are known to be usable; nothing is sent otherwise. */
  private accountBase(): string {
    if (!this.accountSid || !this.authToken) throw new CarrierApiError(0, undefined, "Twilio is not configured: set PARLEY_TWILIO_ACCOUNT_SID and PARLEY_TWILIO_AUTH_TOKEN");
    if (!ACCOUNT_SID.test(this.accountSid)) throw new CarrierApiError(0, undefined, "PARLEY_TWILIO_ACCOUNT_SID is not an account SID (AC and 32 hexadecimal digits)");
    return `${this.apiUrl}/${API_VERSION}/Accounts/${this.accountSid}`;
  }

}

function checkSid(sid: string, pattern: RegExp, what: string): void {
  if (typeof sid !== "string" || !pattern.test(sid)) throw new CarrierApiError(0, undefined, `not a Twilio ${what} SID`);
}

function unexpected(what: string): CarrierApiError {
  return new CarrierApiError(0, undefined, `Twilio's answer is not ${what}`);
}

function callOf(body: unknown): TwilioCall {
  const { sid, status } = body as { sid?: unknown; status?: unknown };
  if (typeof sid !== "string" || !CALL_SID.test(sid) || typeof status !== "string") throw unexpected("a call");
  return { sid, status };
}

function numberOf(body: unknown): TwilioIncomingNumber {
  const { sid, phone_number: phoneNumber, voice_url: voiceUrl } = (body ?? {}) as { sid?: unknown; phone_number?: unknown; voice_url?: unknown };
  if (typeof sid !== "string" || !NUMBER_SID.test(sid) || typeof phoneNumber !== "string") throw unexpected("a phone number");
  return { sid, phoneNumber, voiceUrl: typeof voiceUrl === "string" && voiceUrl ? voiceUrl : null };
}
