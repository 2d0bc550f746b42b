import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { speak } from "../../../../helpers/flite-speech.js";
import { ensureRecognizerBuilt } from "./built-recognizer.js";

// The recognizer process's GRAMMAR request (issue 30: recognition directed by what the dialogue
// expects), spoken to over its own stdin protocol.

const binary = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../../dist/native/pocketsphinx-recognizer");

interface Reply {
  type: string;
  utt?: number;
  text?: string;
  message?: string;
  expected?: string;
}

let child: ChildProcessWithoutNullStreams;
const replies: Reply[] = [];
let woken: (() => void) | undefined;

function send(type: string, payload: Buffer = Buffer.alloc(0)): void {
  const header = Buffer.alloc(5);
  header.write(type, 0, "latin1");
  header.writeUInt32LE(payload.length, 1);
  child.stdin.write(Buffer.concat([header, payload]));
}

async function reply(type: string): Promise<Reply> {
  for (;;) {
    const at = replies.findIndex((r) => r.type === type);
    if (at >= 0) return replies.splice(at, 1)[0]!;
    await new Promise<void>((resolve) => (woken = resolve));
  }
}

let utterance = 0;
async function decodeFinal(samples: Int16Array): Promise<Reply> {
  const id = Buffer.alloc(4);
  id.writeUInt32LE(++utterance);
  send("S", id);
  for (let i = 0; i < samples.length; i += 320) {
    const chunk = samples.slice(i, i + 320);
    send("A", Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  send("E");
  return reply("final");
}

const grammar = (body: string) => Buffer.from(`#JSGF V1.0; grammar expected; ${body}`, "utf8");

beforeAll(async () => {
  ensureRecognizerBuilt();
  child = spawn(binary, [], { stdio: ["pipe", "pipe", "pipe"] });
  createInterface({ input: child.stdout }).on("line", (line) => {
    replies.push(JSON.parse(line) as Reply);
    woken?.();
  });
  await reply("ready");
}, 120_000);

afterAll(() => {
  send("Q");
});

describe("the recognizer's GRAMMAR request", () => {
  it("decodes each utterance with the general model and again with the grammar, until an empty one", async () => {
    const { samples } = await speak("i would like a cleaning please", "rms");
    // A grammar that cannot say "cleaning": its words are all it may hear.
    send("G", grammar("public <s> = i would like a (checkup | whitening) please;"));
    const final = await decodeFinal(samples);
    expect(final.text).toContain("cleaning");
    expect(["i would like a checkup please", "i would like a whitening please"]).toContain(final.expected);
    // Sent again (as the engine does per utterance): the same grammar, still in use.
    send("G", grammar("public <s> = i would like a (checkup | whitening) please;"));
    expect((await decodeFinal(samples)).expected).toMatch(/checkup|whitening/);
    send("G");
    const general = await decodeFinal(samples);
    expect(general.text).toContain("cleaning");
    expect(general.expected).toBeUndefined();
  });

  it("reports a grammar that does not compile, and uses none", async () => {
    send("G", Buffer.from("this is not jsgf", "utf8"));
    expect((await reply("error")).message).toMatch(/grammar does not compile/);
    const { samples } = await speak("i would like a cleaning please", "rms");
    const final = await decodeFinal(samples);
    expect(final.text).toContain("cleaning");
    expect(final.expected).toBeUndefined();
  });

  it("says so when the grammar has no path for the utterance", async () => {
    const { samples } = await speak("yes", "rms");
    // Forty words in a row: half a second of "yes" cannot reach the grammar's end.
    const words = "one two three four five six seven eight nine ten".split(" ");
    send("G", grammar(`public <s> = ${[...words, ...words, ...words, ...words].join(" ")};`));
    const final = await decodeFinal(samples);
    expect(final.expected).toBe("");
    expect(final.text).toMatch(/yes|yeah/);
    send("G", grammar("public <s> = yes | no;"));
    expect((await decodeFinal(samples)).expected).toBe("yes");
    send("G");
  });
});
