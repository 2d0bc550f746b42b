import { createHmac } from "node:crypto";

/** The delivery headers receivers read (the reference's signature header under Parley's name). */
export const WEBHOOK_HEADERS = {
  signature: "X-Parley-Signature",
  event: "X-Parley-Event",
  delivery: "X-Parley-Delivery",
} as const;

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`: Stripe's scheme, so
 * receivers can verify with tooling they already have. The timestamp is signed with the body,
 * so a captured delivery cannot be replayed later than the receiver's tolerance (300 s).
 */
export function webhookSignature(secret: string, rawBody: string, unixSeconds: number): string {
  const digest = createHmac("sha256", secret).update(`${unixSeconds}.${rawBody}`).digest("hex");
  return `t=${unixSeconds},v1=${digest}`;
}
