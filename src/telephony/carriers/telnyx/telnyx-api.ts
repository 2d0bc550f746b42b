import { CarrierApiError, carrierRequest, DEFAULT_CARRIER_TIMEOUT_MS, scrub } from "../carrier-http.js";

/**
 * The slice of Telnyx's Call Control API (v2) Parley uses: dial, answer with a media stream,
 * hang up, transfer. JSON bodies, `Authorization: Bearer <API key>`. Failures are
 * CarrierApiError (carrier-http.ts) with Telnyx's first error's code and detail.
 */
export interface TelnyxApiOptions {
  apiKey: string;
  /** PARLEY_TELNYX_API_URL: `https://api.telnyx.com`, or a stand-in on loopback in tests. */
  apiUrl: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** How a call's audio is streamed to Parley: both ways, in PCMU at 8 kHz (what TelnyxTransport takes). */
export interface TelnyxStream {
  streamUrl: string;
  /** Base64 given back in every webhook and in the stream's `start` (Parley puts its stream token there). */
  clientState: string;
}

export interface TelnyxDial extends TelnyxStream {
  connectionId: string;
  to: string;
  from: string;
  webhookUrl: string;
  timeoutSeconds: number;
}

/** A call_control_id is opaque (`v3:...` these days): bounded and printable, and encoded into paths. */
const CALL_CONTROL_ID = /^[\x21-\x7e]{1,256}$/;

export class TelnyxApi {
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: TelnyxApiOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CARRIER_TIMEOUT_MS;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Places a call (`POST /v2/calls`) whose audio streams to Parley once answered; its call_control_id. */
  async dial(dial: TelnyxDial): Promise<string> {
    const body = await this.request("calls", {
      connection_id: dial.connectionId,
      to: dial.to,
      from: dial.from,
      webhook_url: dial.webhookUrl,
      webhook_url_method: "POST",
      timeout_secs: dial.timeoutSeconds,
      ...streamFields(dial),
    });
    const id = (body as { data?: { call_control_id?: unknown } }).data?.call_control_id;
    if (typeof id !== "string" || !CALL_CONTROL_ID.test(id)) throw new CarrierApiError(0, undefined, "Telnyx's answer is not a call");
    return id;
  }

  /** Answers an incoming call with its audio streamed to Parley. */
  async answer(callControlId: string, stream: TelnyxStream): Promise<void> {
    await this.action(callControlId, "answer", streamFields(stream));
  }

  async hangUp(callControlId: string): Promise<void> {
    await this.action(callControlId, "hangup", {});
  }

  /** Hands the call to `to` (a number, or a `sip:` URI). */
  async transfer(callControlId: string, to: string): Promise<void> {
    await this.action(callControlId, "transfer", { to });
  }

  private async action(callControlId: string, action: string, body: Record<string, unknown>): Promise<void> {
    if (!CALL_CONTROL_ID.test(callControlId)) throw new CarrierApiError(0, undefined, "not a Telnyx call_control_id");
    await this.request(`calls/${encodeURIComponent(callControlId)}/actions/${action}`, body);
  }

  private async request(path: string, body: Record<string, unknown>): Promise<unknown> {
    const { apiKey } = this.options;
    if (!apiKey) throw new CarrierApiError(0, undefined, "Telnyx is not configured: set PARLEY_TELNYX_API_KEY");
    const { status, json } = await carrierRequest({
      carrier: "Telnyx",
      urlSetting: "PARLEY_TELNYX_API_URL",
      method: "POST",
      url: `${this.options.apiUrl.replace(/\/+$/, "")}/v2/${path}`,
      headers: { authorization: `Bearer ${apiKey}`, accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(body),
      timeoutMs: this.timeoutMs,
      fetch: this.fetch,
      secrets: [apiKey],
    });
    if (status < 200 || status > 299) {
      const first = (json as { errors?: Array<{ code?: unknown; title?: unknown; detail?: unknown }> } | undefined)?.errors?.[0];
      const message = typeof first?.detail === "string" ? first.detail : typeof first?.title === "string" ? first.title : `Telnyx answered HTTP ${status}`;
      throw new CarrierApiError(status, typeof first?.code === "string" || typeof first?.code === "number" ? first.code : undefined, scrub(message, [apiKey]));
    }
    return json;
  }
}

/** The stream's fields of a dial or an answer: both ways, PCMU, Parley's state echoed back. */
function streamFields(stream: TelnyxStream): Record<string, unknown> {
  return {
    stream_url: stream.streamUrl,
    stream_track: "inbound_track",
    stream_bidirectional_mode: "rtp",
    stream_bidirectional_codec: "PCMU",
    stream_codec: "PCMU",
    client_state: stream.clientState,
  };
}
