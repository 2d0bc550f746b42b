/**
 * The wire protocol of the recognizer process (specified in recognizer.c). Requests on its
 * stdin: [type: u8][payload length: u32 LE][payload]. Replies on its stdout: one JSON object
 * per line.
 */

/** Request type bytes. */
export const REQUEST = {
  /** Payload: the utterance id (u32 LE). */
  startUtterance: 0x53, // 'S'
  /** Payload: mono PCM16 LE at 16 kHz. */
  audio: 0x41, // 'A'
  /** Replies with the utterance's final. */
  endUtterance: 0x45, // 'E'
  /** Payload: the utterance id (u32 LE). Ends that utterance, if still open, without a reply. */
  cancel: 0x43, // 'C'
  /** A new call: forgets the previous call's channel adaptation. */
  reset: 0x52, // 'R'
  /** Payload: a channel mean (float32 LE each) a final reported: the call's adaptation, carried to this recognizer. */
  setMean: 0x4d, // 'M'
  /** Payload: a JSGF grammar (UTF-8) each next utterance is decoded with too; empty: none. */
  grammar: 0x47, // 'G'
  shutdown: 0x51, // 'Q'
} as const;

export type RequestType = (typeof REQUEST)[keyof typeof REQUEST];

const HEADER_BYTES = 5;

export function encodeRequest(type: RequestType, payload?: Uint8Array): Buffer {
  const message = Buffer.alloc(HEADER_BYTES + (payload?.byteLength ?? 0));
  message[0] = type;
  message.writeUInt32LE(payload?.byteLength ?? 0, 1);
  if (payload) message.set(payload, HEADER_BYTES);
  return message;
}

/** START_UTT or CANCEL: the requests about one utterance. */
export function encodeUtteranceRequest(type: typeof REQUEST.startUtterance | typeof REQUEST.cancel, utterance: number): Buffer {
  const id = Buffer.alloc(4);
  id.writeUInt32LE(utterance);
  return encodeRequest(type, id);
}

/** PCM16 in the platform's byte order, which the recognizer reads as little-endian (x86, arm64). */
export function encodeAudio(samples: Int16Array): Buffer {
  return encodeRequest(REQUEST.audio, new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
}

/** SET_MEAN: the recognizer starts from this channel mean (one float32 per cepstral coefficient). */
export function encodeMean(mean: readonly number[]): Buffer {
  return encodeRequest(REQUEST.setMean, new Uint8Array(Float32Array.from(mean).buffer));
}

/** GRAMMAR: what the next utterances are expected to say (null: nothing in particular). */
export function encodeGrammar(grammar: string | null): Buffer {
  return encodeRequest(REQUEST.grammar, grammar === null ? undefined : Buffer.from(grammar, "utf8"));
}

export type RecognizerReply =
  | { type: "ready" }
  | { type: "partial"; utt: number; text: string }
  /** `expected`: with a grammar, its words ("" when it has no path for the utterance). */
  | { type: "final"; utt: number; text: string; expected?: string; mean: number[] }
  | { type: "error"; utt: number; message: string };

/** The replies that belong to an utterance. */
export type UtteranceReply = Exclude<RecognizerReply, { type: "ready" }>;

/** Parses one reply line; throws on anything the protocol does not define. */
export function parseReply(line: string): RecognizerReply {
  const reply = JSON.parse(line) as Record<string, unknown>;
  switch (reply.type) {
    case "ready":
      return { type: "ready" };
    case "partial":
      if (typeof reply.utt === "number" && typeof reply.text === "string") return { type: "partial", utt: reply.utt, text: reply.text };
      break;
    case "final":
      if (typeof reply.utt === "number" && typeof reply.text === "string" && isMean(reply.mean) && (reply.expected === undefined || typeof reply.expected === "string")) {
        return { type: "final", utt: reply.utt, text: reply.text, mean: reply.mean, ...(reply.expected !== undefined ? { expected: reply.expected } : {}) };
      }
      break;
    case "error":
      if (typeof reply.utt === "number" && typeof reply.message === "string") {
        return { type: "error", utt: reply.utt, message: reply.message };
      }
      break;
  }
  throw new Error(`unexpected reply from the recognizer: ${line}`);
}

/** A channel mean as the recognizer writes it: up to 64 finite numbers (13 for the US-English model). */
function isMean(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.length <= 64 && value.every((n) => typeof n === "number" && Number.isFinite(n));
}
