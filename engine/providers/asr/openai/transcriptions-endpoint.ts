/**
 * The `/v1/audio/transcriptions` URL of an OpenAI-compatible server from its base URL (a base
 * that already ends in `/v1` is taken too; a path prefix, a reverse proxy's, is kept). Throws
 * on a URL that is not http(s) or that carries credentials (they belong in the API key, which
 * is never logged).
 */
export function transcriptionsEndpoint(base: string): URL {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(`openai transcriptions: url is not a URL: ${base}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`openai transcriptions: url must be http or https, got ${url.protocol}`);
  if (url.username || url.password) throw new Error("openai transcriptions: put credentials in apiKey, not in the url");
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/v1") ? `${path}/audio/transcriptions` : `${path}/v1/audio/transcriptions`;
  url.search = "";
  url.hash = "";
  return url;
}
