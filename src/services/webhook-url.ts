import { isIP } from "node:net";
import { ApiError } from "../core/api-error.js";

export interface WebhookUrlPolicy {
  /** Also accept http:// when the host is a loopback address (local development, tests). */
  allowLoopbackHttp: boolean;
}

/** Loopback hosts: `localhost`, 127.0.0.0/8 and ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return isIP(host) === 6 && host === "::1";
}

const LOOPBACK_HOSTS = "127.0.0.0/8, ::1, localhost";

/**
 * Checks a webhook URL against the policy: absolute, https (or http to a loopback host when
 * allowed), no credentials in it. Throws 400 `invalid_url` saying what is wrong.
 */
export function parseWebhookUrl(raw: string, policy: WebhookUrlPolicy, field = "url"): URL {
  const invalid = (why: string) => ApiError.field("invalid_url", field, why);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("must be an absolute https:// URL");
  }
  if (url.protocol === "http:") {
    if (!policy.allowLoopbackHttp) {
      throw invalid("must use https:// (http:// is accepted only for loopback hosts when PARLEY_WEBHOOK_ALLOW_LOOPBACK_HTTP=1)");
    }
    if (!isLoopbackHost(url.hostname)) {
      throw invalid(`must use https://; http:// is accepted only for loopback hosts (${LOOPBACK_HOSTS}), not '${url.hostname}'`);
    }
  } else if (url.protocol !== "https:") {
    throw invalid(`must use https://, not ${url.protocol}//`);
  }
  // Credentials in a URL end up in logs and error messages; the signature authenticates deliveries.
  if (url.username || url.password) throw invalid("must not contain a user name or password");
  return url;
}
