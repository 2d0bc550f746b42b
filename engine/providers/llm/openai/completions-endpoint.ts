/**
 * The `/v1/chat/completions` URL of an OpenAI-compatible server from its base URL (a base that
 * already ends in `/v1`, as Ollama's docs write it, is taken too). Throws on a URL that is not
 * http(s) or that carries credentials (they belong in the API key, which is never logged).
 */
export function completionsEndpoint(base: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error(`openai chat: url is not a URL: ${base}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`openai chat: url must be http or https, got ${url.protocol}`);
  if (url.username || url.password) throw new Error("openai chat: put credentials in apiKey, not in the url");
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith("/v1") ? `${path}/chat/completions` : `${path}/v1/chat/completions`;
  url.hash = "";
  return url.toString();
}
