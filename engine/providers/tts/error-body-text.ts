/** Enough of an error body to quote the server's message. */
const ERROR_BODY_LIMIT = 4096;

/**
 * The start of a refused request's body as text, read up to a bound so a server answering an
 * error with megabytes cannot hold the sentence up or fill memory; the rest is left unread
 * (the request is over, its connection is released or closed).
 */
export async function errorBodyText(body: AsyncIterable<Uint8Array>, limit = ERROR_BODY_LIMIT): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const bytes of body) {
    text += decoder.decode(bytes, { stream: true });
    if (text.length >= limit) break;
  }
  return text;
}
