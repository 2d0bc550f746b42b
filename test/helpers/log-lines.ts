import { Writable } from "node:stream";

/** A log destination that keeps every JSON line written to it, parsed, in `lines`. */
export function logLines(): { destination: Writable; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { destination, lines };
}
