/**
 * Reads a `text/event-stream` body and yields each event's data (its `data:` lines joined with
 * newlines). Comments, `event:`, `id:` and `retry:` fields are ignored: chat-completions
 * streams only use `data:`. An event cut off by the end of the body is still yielded.
 */
export async function* readServerSentEvents(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  let data: string[] = [];
  const lineEnd = /\r\n|\r|\n/;
  for await (const chunk of chunks) {
    buffered += decoder.decode(chunk, { stream: true });
    for (;;) {
      const match = lineEnd.exec(buffered);
      // A lone "\r" at the end may be the first half of "\r\n": wait for the next chunk.
      if (!match || (match[0] === "\r" && match.index === buffered.length - 1)) break;
      const line = buffered.slice(0, match.index);
      buffered = buffered.slice(match.index + match[0].length);
      if (line === "") {
        if (data.length > 0) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
    }
  }
  buffered += decoder.decode();
  if (buffered.startsWith("data:")) data.push(buffered.slice(buffered.startsWith("data: ") ? 6 : 5));
  if (data.length > 0) yield data.join("\n");
}
