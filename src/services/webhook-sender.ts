import { readFileSync } from "node:fs";
import path from "node:path";
import type { LookupFunction } from "node:net";
import { Agent, errors as undiciErrors, request } from "undici";
import { packageRoot } from "../../engine/index.js";

/** What one attempt came to: the receiver's status, or why there was none. */
export interface AttemptOutcome {
  /** The HTTP status the receiver answered; null when no answer came. */
  statusCode: number | null;
  /** Why the attempt failed without an answer, or what was wrong with the answer (a redirect). */
  error: string | null;
  /** The start of the answer's body, at most the configured cap. */
  responseBody: string | null;
  /** The body reached the cap, so it may have been longer than what was kept (absent: not read). */
  responseBodyFilled?: boolean;
  durationMs: number;
  /** A 429 or 503's `Retry-After`, in milliseconds. */
  retryAfterMs: number | null;
}

export interface WebhookSenderOptions {
  /** The whole attempt (connection, answer, body) within this. */
  timeoutMs: number;
  /** Most bytes of the answer's body read and kept. */
  responseBodyLimit: number;
  /** Resolves (and vets) the receiver's host name; the address it returns is the one connected to. */
  lookup?: LookupFunction;
}

const USER_AGENT = `Parley/${(JSON.parse(readFileSync(path.join(packageRoot(import.meta.url), "package.json"), "utf8")) as { version: string }).version}`;

/** Seconds or an HTTP date; anything else is ignored. */
function parseRetryAfter(value: string | string[] | undefined, now: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

function describeError(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `no answer within ${timeoutMs} ms (timed out)`;
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code;
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "connection closed before an answer";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host name does not resolve";
    default:
      return e.cause?.message ?? e.message ?? String(err);
  }
}

/**
 * Sends one signed webhook request: POST, no redirects followed (a 3xx is a failure), the
 * whole attempt bounded by a timeout, the answer's body read only up to a small cap.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: WebhookSenderOptions) {
    this.agent = new Agent({
      connect: { timeout: options.timeoutMs, ...(options.lookup ? { lookup: options.lookup } : {}) },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  get userAgent(): string {
    return USER_AGENT;
  }

  /**
   * `options.timeoutMs` bounds this attempt instead of the sender's own timeout (a custom tool's
   * `timeout_ms`); the connection, headers and body timeouts of the sender's agent still apply,
   * so a per-attempt timeout longer than the sender's is cut to the sender's.
   */
  async send(url: URL, body: string, headers: Record<string, string>, options?: { timeoutMs?: number }): Promise<AttemptOutcome> {
    const started = Date.now();
    const abort = new AbortController();
    const timeoutMs = Math.min(options?.timeoutMs ?? this.options.timeoutMs, this.options.timeoutMs);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    try {
      const res = await request(url, {
        method: "POST",
        dispatcher: this.agent,
        signal: abort.signal,
        headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...headers },
        body,
      });
      const { text: responseBody, filled } = await this.readCapped(res.body);
      const status = res.statusCode;
      return {
        statusCode: status,
        error: status >= 300 && status < 400 ? "redirects are not followed" : null,
        responseBody,
        responseBodyFilled: filled,
        durationMs: Date.now() - started,
        retryAfterMs: status === 429 || status === 503 ? parseRetryAfter(res.headers["retry-after"], Date.now()) : null,
      };
    } catch (err) {
      return { statusCode: null, error: describeError(err, timedOut || err instanceof undiciErrors.HeadersTimeoutError, timeoutMs), responseBody: null, durationMs: Date.now() - started, retryAfterMs: null };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reads up to the cap, then drops the rest (and with it the connection, if more was coming). */
  private async readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<{ text: string; filled: boolean }> {
    const limit = this.options.responseBodyLimit;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        body.destroy();
        break;
      }
    }
    return { text: Buffer.concat(chunks).subarray(0, limit).toString("utf8"), filled: size >= limit };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
