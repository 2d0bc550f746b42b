/**
 * Verifying webhook deliveries. Parley signs each delivery exactly as
 * src/services/webhook-signature.ts does:
 *
 *   X-Parley-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * with the webhook's `secret` (or, for a call's own `webhook_url`, the account's
 * `signing_secret` from `GET /v1/account`). `verifyWebhookSignature` recomputes the HMAC over
 * the raw body as received, compares it in constant time (crypto.timingSafeEqual), and
 * refuses a timestamp further than `toleranceSeconds` (300 by default) from now, so a captured
 * delivery cannot be replayed later. Verify before parsing: JSON.parse then JSON.stringify does
 * not give back the same bytes.
 *
 * Node-only (node:crypto): receivers are servers.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** The header Parley signs deliveries in (Node lower-cases it: `req.headers["x-parley-signature"]`). */
export const WEBHOOK_SIGNATURE_HEADER = "X-Parley-Signature";

/** The receivers' default tolerance, as the README's receiver uses. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/** Why a delivery was refused. */
export type WebhookSignatureFailure = "missing_header" | "malformed_header" | "signature_mismatch" | "timestamp_outside_tolerance";

export class WebhookSignatureError extends Error {
  readonly reason: WebhookSignatureFailure;

  constructor(reason: WebhookSignatureFailure, message: string) {
    super(message);
    this.name = "WebhookSignatureError";
    this.reason = reason;
  }
}

export interface VerifyWebhookSignatureOptions {
  /** The raw request body, exactly as received (a string or the bytes), never re-serialized JSON. */
  payload: string | Uint8Array;
  /** The `X-Parley-Signature` header's value (as Node gives it: a string, possibly an array, or undefined). */
  header: string | readonly string[] | null | undefined;
  /** The webhook's secret (`whsec_...`), or the account's `signing_secret` for per-call `webhook_url` deliveries. */
  secret: string;
  /** The largest distance between the signed timestamp and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (default: the clock). */
  now?: number;
}

/** What a verified signature says. */
export interface VerifiedWebhookSignature {
  /** The signed timestamp (Unix seconds). */
  timestamp: number;
}

/**
 * Throws `WebhookSignatureError` (with `reason`) unless `header` is a valid Parley signature
 * of `payload` with `secret`, made within `toleranceSeconds` of now.
 */
export function verifyWebhookSignature(options: VerifyWebhookSignatureOptions): VerifiedWebhookSignature {
  const { payload, secret } = options;
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  if (typeof payload !== "string" && !(payload instanceof Uint8Array)) {
    throw new TypeError("verifyWebhookSignature: payload must be the raw request body (a string or a Buffer), not parsed JSON");
  }
  if (typeof secret !== "string" || secret.length === 0) throw new TypeError("verifyWebhookSignature: secret must be a non-empty string");
  if (typeof tolerance !== "number" || Number.isNaN(tolerance) || tolerance < 0) {
    throw new TypeError("verifyWebhookSignature: toleranceSeconds must be a number of seconds, 0 or more");
  }

  const header = typeof options.header === "string" ? options.header : Array.isArray(options.header) ? options.header.join(",") : undefined;
  if (header === undefined || header.trim() === "") {
    throw new WebhookSignatureError("missing_header", `No ${WEBHOOK_SIGNATURE_HEADER} header: this request was not signed by Parley`);
  }
  const { timestamp, signatures } = parseSignatureHeader(header);

  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(payload).digest();
  // Several v1 values may come (a receiver behind a proxy that merges headers): one match is enough.
  const matches = signatures.some((hex) => {
    const given = Buffer.from(hex, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) {
    throw new WebhookSignatureError(
      "signature_mismatch",
      `${WEBHOOK_SIGNATURE_HEADER} does not match the payload: wrong secret, or the body was changed (verify the raw body, before any JSON parsing)`,
    );
  }

  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookSignatureError(
      "timestamp_outside_tolerance",
      `${WEBHOOK_SIGNATURE_HEADER} timestamp ${timestamp} is ${Math.abs(now - timestamp)} s away from now (tolerance ${tolerance} s): a replayed or delayed delivery, or a wrong clock`,
    );
  }
  return { timestamp };
}

/** `t=<seconds>,v1=<hex>[,v1=<hex>...]`; unknown keys are ignored (room for a future v2). */
function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === "t") {
      if (!/^\d{1,12}$/.test(value) || (timestamp !== undefined && timestamp !== Number(value))) {
        throw new WebhookSignatureError("malformed_header", `${WEBHOOK_SIGNATURE_HEADER} has a bad timestamp: expected t=<unix seconds>`);
      }
      timestamp = Number(value);
    } else if (key === "v1" && /^[0-9a-fA-F]{64}$/.test(value)) {
      signatures.push(value);
    }
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new WebhookSignatureError("malformed_header", `${WEBHOOK_SIGNATURE_HEADER} must look like t=<unix seconds>,v1=<64 hex characters>`);
  }
  return { timestamp, signatures };
}

/** The body of every delivery: the reference's envelope plus `event_id` and `sequence`. */
export interface WebhookEventPayload<Data = Record<string, unknown>> {
  /** The event's name as the webhook subscribed to it (`call.completed`, `webhook.test`, ...). */
  event: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  /** The receiving webhook; null for a call's own `webhook_url`. */
  webhook_id: string | null;
  /** The same for this event at every receiver: deduplicate on it (or on `X-Parley-Delivery`). */
  event_id: string;
  /** Increases in the order events were stored: order by it. */
  sequence: number;
  data: Data;
}

/** Verifies the delivery (see `verifyWebhookSignature`), then parses its body. */
export function verifyWebhookEvent<Data = Record<string, unknown>>(options: VerifyWebhookSignatureOptions): WebhookEventPayload<Data> {
  verifyWebhookSignature(options);
  const text = typeof options.payload === "string" ? options.payload : new TextDecoder().decode(options.payload);
  return JSON.parse(text) as WebhookEventPayload<Data>;
}
