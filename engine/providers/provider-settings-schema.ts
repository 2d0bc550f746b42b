import { z } from "zod";

// The settings most remote providers share, so each is spelled and checked the same way.

/** The service's base URL (its API paths are appended). */
export function serviceUrl(defaultUrl: string, schemes: readonly string[] = ["http", "https"]) {
  const pattern = new RegExp(`^(${schemes.join("|")})://[^\\s/?#]+[^\\s]*$`);
  return z
    .string()
    .regex(pattern, `must be a ${schemes.join("/")} URL`)
    .transform((url) => url.replace(/\/+$/, ""))
    .default(defaultUrl)
    .describe("base URL of the service (its API paths are appended)");
}

/** A credential: empty means none (local servers need none). Never logged. How it is sent is the provider's (its description says). */
export function apiKey() {
  return z.string().default("").describe("the service's key; empty: none (local servers need none); never logged");
}

/** A model name of the service. */
export function modelName(defaultModel: string, what = "the service's model") {
  return z.string().min(1).default(defaultModel).describe(what);
}

/** Longest wait for a request's first byte (and between later bytes of a stream). */
export function requestTimeoutMs(defaultMs = 10_000) {
  return z.coerce.number().int().min(100).max(120_000).default(defaultMs).describe("longest wait in ms for the first byte of an answer, and between later ones");
}
