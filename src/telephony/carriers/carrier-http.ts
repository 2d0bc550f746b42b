/**
 * One request to a carrier's REST API (Twilio, Telnyx, Vonage), with what every carrier client
 * needs: a time limit covering the answer's body, no redirects (following one could hand the
 * credentials to another origin), answers capped in size, the API's URL https (http to
 * loopback only, for a local stand-in), and secrets scrubbed from every error message, should
 * an answer ever echo them.
 */

/**
 * A request the carrier refused (`status` its HTTP status, `code` its own error code) or that
 * never got an answer (`status` 0: a timeout, a network failure, or a request refused here
 * before it was sent). The message is the carrier's, or says what went wrong here; it never
 * holds a credential.
 */
export class CarrierApiError extends Error {
  override readonly name = "CarrierApiError";

  constructor(
    readonly status: number,
    readonly code: number | string | undefined,
    message: string,
    readonly moreInfo?: string,
  ) {
    super(message);
  }
}

export const DEFAULT_CARRIER_TIMEOUT_MS = 10_000;
/** More than any answer of the resources Parley uses; a larger body is not the carrier's. */
const MAX_BODY_BYTES = 1 << 20;
/** A carrier's own message is passed on (into call records and logs), cut to this length. */
export const MAX_MESSAGE_CHARS = 500;
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface CarrierRequest {
  /** The carrier's name in messages: "Twilio". */
  carrier: string;
  /** The setting holding the API's URL, named when it is not usable. */
  urlSetting: string;
  method: "GET" | "POST" | "PUT";
  url: string;
  headers: Record<string, string>;
  body?: string | URLSearchParams | undefined;
  timeoutMs: number;
  fetch: typeof fetch;
  /** Credentials never to appear in an error message. */
  secrets: readonly string[];
}

/** The answer: its status and its body parsed as JSON (undefined when it is not JSON). Throws only for no answer. */
export async function carrierRequest(request: CarrierRequest): Promise<{ status: number; json: unknown }> {
  const { carrier } = request;
  checkApiUrl(request.url, request.urlSetting);
  const signal = AbortSignal.timeout(request.timeoutMs);
  let status = 0;
  let text: string;
  try {
    const response = await request.fetch(request.url, { method: request.method, headers: request.headers, body: request.body, redirect: "error", signal });
    status = response.status;
    text = await readCapped(response, carrier);
  } catch (err) {
    if (err instanceof CarrierApiError) throw err;
    if (signal.aborted) throw new CarrierApiError(0, undefined, `${carrier} did not answer within ${request.timeoutMs} ms`);
    throw new CarrierApiError(0, undefined, scrub(`${carrier} could not be reached: ${reason(err)}`, request.secrets));
  }
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status, json };
}

/** Refuses (status 0, nothing sent) an API URL that is not https, or http to loopback. */
function checkApiUrl(url: string, setting: string): void {
  const api = URL.canParse(url) ? new URL(url) : undefined;
  // The credentials travel with every request: only over TLS, or to a stand-in on this machine.
  if (!api || !(api.protocol === "https:" || (api.protocol === "http:" && LOOPBACK_HOSTS.has(api.hostname)))) {
    throw new CarrierApiError(0, undefined, `${setting} must be an https:// URL (http:// only to loopback)`);
  }
}

/** `message` with every secret taken out, cut to MAX_MESSAGE_CHARS. */
export function scrub(message: string, secrets: readonly string[]): string {
  let out = message;
  for (const secret of secrets) if (secret) out = out.split(secret).join("[redacted]");
  return out.slice(0, MAX_MESSAGE_CHARS);
}

/** The answer's body as text, refused past MAX_BODY_BYTES rather than held in memory whole. */
async function readCapped(response: Response, carrier: string): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new CarrierApiError(response.status, undefined, `${carrier}'s answer is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** What a failed fetch says: undici puts the network error (ECONNREFUSED...) in `cause`. */
function reason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === "string") return cause.code;
  if (cause && typeof cause.message === "string") return cause.message;
  return err instanceof Error ? err.message : String(err);
}
