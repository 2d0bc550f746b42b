/**
 * The slice of Vonage's Voice API Parley uses: create a call (`POST /v1/calls`) and hang up or
 * transfer one (`PUT /v1/calls/{uuid}`). Each request carries a fresh RS256 JWT signed with the
 * application's private key (jwt.ts); bodies are JSON. Failures are CarrierApiError
 * (carrier-http.ts) with Vonage's RFC 7807 `{type, title, detail}`.
 */
import type { KeyObject } from "node:crypto";
import { CarrierApiError, carrierRequest, DEFAULT_CARRIER_TIMEOUT_MS, scrub } from "../carrier-http.js";
import { vonageApiToken } from "./jwt.js";
import type { Ncco } from "./ncco.js";

export interface VonageApiOptions {
  applicationId: string;
  /** The application's RSA private key, read once at start (PARLEY_VONAGE_PRIVATE_KEY_FILE). */
  privateKey: KeyObject;
  /** PARLEY_VONAGE_API_URL: `https://api.nexmo.com`, or a stand-in on loopback in tests. */
  apiUrl: string;
  /** Each request, answer body included, is given up after this long (status 0). Default 10 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Milliseconds since the epoch, for the tokens' `iat`. */
  now?: () => number;
}

export interface VonageCreateCallRequest {
  /** E.164, with or without the `+` (Vonage wants it without). */
  to: string;
  from: string;
  /** What the call runs once answered. */
  ncco: Ncco;
  /** Where Vonage posts the call's events (JSON). */
  eventUrl: string;
  /** How long Vonage lets it ring, in seconds (1-120; clamped). */
  ringingTimerSeconds?: number;
}

/** A call Vonage created, as far as Parley needs it. */
export interface VonageCall {
  uuid: string;
  status: string;
}

/** Vonage's call UUIDs: what may go into a request path. */
export const VONAGE_UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const PHONE = /^\+?[1-9]\d{6,14}$/;
const MAX_RINGING_TIMER_S = 120;

export class VonageApi {
  private readonly applicationId: string;
  private readonly privateKey: KeyObject;
  private readonly apiUrl: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;
  private readonly now: () => number;

  constructor(options: VonageApiOptions) {
    this.applicationId = options.applicationId;
    this.privateKey = options.privateKey;
    this.apiUrl = options.apiUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CARRIER_TIMEOUT_MS;
    this.fetch = options.fetch ?? globalThis.fetch;
    this.now = options.now ?? Date.now;
  }

  /** Places a call (`POST /v1/calls`) that runs `ncco` once answered and posts its events to `eventUrl`. */
  async createCall(request: VonageCreateCallRequest): Promise<VonageCall> {
    const to = vonageNumber(request.to, "to");
    const from = vonageNumber(request.from, "from");
    const body: Record<string, unknown> = {
      to: [{ type: "phone", number: to }],
      from: { type: "phone", number: from },
      ncco: request.ncco,
      event_url: [request.eventUrl],
      event_method: "POST",
    };
    if (request.ringingTimerSeconds !== undefined) body.ringing_timer = Math.min(MAX_RINGING_TIMER_S, Math.max(1, Math.ceil(request.ringingTimerSeconds)));
    const json = await this.request("POST", "/v1/calls", body);
    const { uuid, status } = (json ?? {}) as { uuid?: unknown; status?: unknown };
    if (typeof uuid !== "string" || !VONAGE_UUID.test(uuid)) throw new CarrierApiError(0, undefined, "Vonage's answer is not a call");
    return { uuid, status: typeof status === "string" ? status : "started" };
  }

  /** Ends the call (answered: completed; still ringing: cancelled). */
  async hangUp(uuid: string): Promise<void> {
    await this.request("PUT", callPath(uuid), { action: "hangup" });
  }

  /** Moves the live call out of its current NCCO (its WebSocket closes) into `ncco`. */
  async transfer(uuid: string, ncco: Ncco): Promise<void> {
    await this.request("PUT", callPath(uuid), { action: "transfer", destination: { type: "ncco", ncco } });
  }

  /** One request with a fresh token; the parsed JSON of a 2xx answer (undefined for 204), else a CarrierApiError. */
  private async request(method: "POST" | "PUT", path: string, body: unknown): Promise<unknown> {
    const token = this.token();
    const secrets = [token];
    const { status, json } = await carrierRequest({
      carrier: "Vonage",
      urlSetting: "PARLEY_VONAGE_API_URL",
      method,
      url: `${this.apiUrl}${path}`,
      headers: { authorization: `Bearer ${token}`, accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(body),
      timeoutMs: this.timeoutMs,
      fetch: this.fetch,
      secrets,
    });
    if (status < 200 || status > 299) {
      const problem = (json ?? {}) as { type?: unknown; title?: unknown; detail?: unknown };
      const type = typeof problem.type === "string" ? problem.type : undefined;
      const title = typeof problem.title === "string" && problem.title ? problem.title : `Vonage answered HTTP ${status}`;
      const message = typeof problem.detail === "string" && problem.detail ? `${title}: ${problem.detail}` : title;
      // Vonage's type is a URL whose fragment names the error (`...api-errors#unauthorized`).
      const code = type?.includes("#") ? type.slice(type.lastIndexOf("#") + 1) : type;
      throw new CarrierApiError(status, code === undefined ? undefined : scrub(code, secrets), scrub(message, secrets), type === undefined ? undefined : scrub(type, secrets));
    }
    return json;
  }

  /** A token for one request, once the settings are known to be usable; nothing is sent otherwise. */
  private token(): string {
    if (!this.applicationId) throw new CarrierApiError(0, undefined, "Vonage is not configured: set PARLEY_VONAGE_APPLICATION_ID and PARLEY_VONAGE_PRIVATE_KEY_FILE");
    try {
      return vonageApiToken({ applicationId: this.applicationId, privateKeyPem: this.privateKey, now: this.now() });
    } catch (err) {
      throw new CarrierApiError(0, undefined, `no Vonage API token: ${(err as Error).message}`);
    }
  }
}

/** `/v1/calls/{uuid}`, for a UUID only: anything else could change the path (`../`, `?`). */
function callPath(uuid: string): string {
  if (typeof uuid !== "string" || !VONAGE_UUID.test(uuid)) throw new CarrierApiError(0, undefined, "not a Vonage call UUID");
  return `/v1/calls/${uuid}`;
}

/** A phone number as Vonage writes it: E.164 digits without the `+`. */
function vonageNumber(number: string, field: string): string {
  if (typeof number !== "string" || !PHONE.test(number)) throw new CarrierApiError(0, undefined, `${field} is not an E.164 phone number`);
  return number.replace(/^\+/, "");
}
