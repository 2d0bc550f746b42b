import { createHash, randomUUID, type Hash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import type { DeepgramMetadata, DeepgramResults, DeepgramWord } from "../../engine/providers/asr/deepgram/deepgram-protocol.js";

/** What a transcript is made from: the stand-in hears bytes, not words. */
export interface DeepgramStandinUtterance {
  /** The utterance's number on its stream, from 1. */
  index: number;
  /** Audio received for the utterance so far (all of it, for the final). */
  audioMs: number;
  sampleRate: number;
}

export interface DeepgramStandinOptions {
  /**
   * How long after `Finalize` the final result comes: stands in for the service's compute and
   * network time. `Infinity`: never (for clients' timeouts).
   */
  finalDelayMs: number;
  /** An interim result per this many ms of audio received; none when unset. */
  interimEveryMs?: number;
  /** Default: `stand in utterance <index>`. Interim results carry its first words, one more each time. */
  transcript?: (utterance: DeepgramStandinUtterance) => string;
  /** When set, streams need `Authorization: Token <apiKey>` (401 otherwise). */
  apiKey?: string;
  /** Refuses this many stream requests first with 503, as a service blip would. Default 0. */
  unavailableFirst?: number;
}

export interface DeepgramStandinStream {
  /** The query parameters of the stream request. */
  params: Record<string, string>;
  sampleRate: number;
  /** Audio bytes received, and their SHA-256 (hex). */
  audioBytes: number;
  audioSha256: string;
  /** Finals sent for utterances with audio. */
  utterances: number;
  finalizes: number;
  keepAlives: number;
  closeStreams: number;
  open: boolean;
}

export interface DeepgramStandinStats {
  /** Stream requests refused at the handshake (key or parameters). */
  refused: number;
  /** Every stream accepted, oldest first. */
  streams: DeepgramStandinStream[];
}

export interface DeepgramStandin {
  /** Takes the upgrade when its path is `/v1/listen` (then answers it, accepted or refused); false otherwise. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  stats(): DeepgramStandinStats;
  /** Closes every open stream from the server side, as the service does when it fails (default 1011). */
  disconnectAll(code?: number, reason?: string): void;
  /** Cuts every stream; the stand-in accepts none after. */
  close(): void;
}

const LISTEN_PATH = "/v1/listen";

/**
 * A local server that speaks Deepgram's live streaming protocol, for tests and the latency
 * benchmark: it stands in for the cloud service so that the engine can be measured apart from
 * model compute. It recognizes nothing: each utterance (the audio between two `Finalize`
 * messages) gets `transcript(...)` after `finalDelayMs`. Mount it on any `http.Server`:
 *
 *     server.on("upgrade", (request, socket, head) => standin.handleUpgrade(request, socket, head) || socket.destroy());
 */
export function deepgramStandin(options: DeepgramStandinOptions): DeepgramStandin {
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const streams: StandinStream[] = [];
  let refused = 0;
  let closed = false;

  return {
    handleUpgrade(request, socket, head) {
      const url = new URL(request.url ?? "/", "http://standin");
      if (url.pathname !== LISTEN_PATH) return false;
      const params = Object.fromEntries(url.searchParams);
      const sampleRate = Number(params.sample_rate);
      let refusal: [number, string, string] | undefined;
      if (closed) refusal = [503, "Service Unavailable", "the stand-in is closed"];
      else if (refused < (options.unavailableFirst ?? 0)) refusal = [503, "Service Unavailable", "the stand-in is briefly unavailable"];
      else if (options.apiKey !== undefined && request.headers.authorization !== `Token ${options.apiKey}`) {
        refusal = [401, "Unauthorized", "Invalid credentials."];
      } else if (params.encoding !== "linear16") refusal = [400, "Bad Request", "encoding must be linear16"];
      else if (!Number.isInteger(sampleRate) || sampleRate <= 0) refusal = [400, "Bad Request", "sample_rate is required"];
      else if (params.channels !== undefined && params.channels !== "1") refusal = [400, "Bad Request", "only channels=1 is served"];
      if (refusal) {
        refused++;
        refuse(socket, ...refusal);
        return true;
      }
      server.handleUpgrade(request, socket, head, (ws) => streams.push(new StandinStream(ws, params, sampleRate, options)));
      return true;
    },
    stats: () => ({ refused, streams: streams.map((stream) => stream.stats()) }),
    disconnectAll(code = 1011, reason = "stand-in disconnect") {
      for (const stream of streams) stream.disconnect(code, reason);
    },
    close() {
      closed = true;
      for (const stream of streams) stream.terminate();
      server.close();
    },
  };
}

/** Answers a refused handshake the way the service does: an HTTP error with a JSON body and `dg-error`. */
function refuse(socket: Duplex, status: number, statusText: string, message: string): void {
  const body = JSON.stringify({ err_code: status === 401 ? "INVALID_AUTH" : "Bad Request", err_msg: message, request_id: randomUUID() });
  socket.once("finish", () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${statusText}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `dg-error: ${message}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((total, part) => total + part.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function bytesOf(data: RawData): Buffer[] {
  if (Array.isArray(data)) return data;
  return [data instanceof ArrayBuffer ? Buffer.from(data) : data];
}

/** One accepted stream: counts audio, answers control messages. */
class StandinStream {
  private readonly requestId = randomUUID();
  private readonly hash: Hash = createHash("sha256");
  /** Finals waiting for their delay. */
  private readonly pending = new Map<NodeJS.Timeout, DeepgramResults>();
  private audioBytes = 0;
  /** Where the current utterance starts, in bytes from the start of the stream. */
  private utteranceStart = 0;
  private utteranceIndex = 1;
  private interims = 0;
  private utterances = 0;
  private finalizes = 0;
  private keepAlives = 0;
  private closeStreams = 0;

  constructor(
    private readonly ws: WebSocket,
    private readonly params: Record<string, string>,
    private readonly sampleRate: number,
    private readonly options: DeepgramStandinOptions,
  ) {
    ws.on("message", (data, isBinary) => (isBinary ? this.onAudio(data) : this.onControl(data.toString())));
    ws.on("close", () => this.clearTimers());
    ws.on("error", () => undefined);
  }

  stats(): DeepgramStandinStream {
    return {
      params: { ...this.params },
      sampleRate: this.sampleRate,
      audioBytes: this.audioBytes,
      audioSha256: this.hash.copy().digest("hex"),
      utterances: this.utterances,
      finalizes: this.finalizes,
      keepAlives: this.keepAlives,
      closeStreams: this.closeStreams,
      open: this.ws.readyState === this.ws.OPEN,
    };
  }

  disconnect(code: number, reason: string): void {
    this.clearTimers();
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, reason);
  }

  terminate(): void {
    this.clearTimers();
    this.ws.terminate();
  }

  private onAudio(data: RawData): void {
    for (const part of bytesOf(data)) this.hash.update(part);
    this.audioBytes += byteLength(data);
    const every = this.options.interimEveryMs;
    if (!every) return;
    while (this.msOf(this.audioBytes - this.utteranceStart) >= (this.interims + 1) * every) {
      this.interims++;
      const words = this.transcript().split(/\s+/).filter((word) => word !== "");
      this.send(this.results(words.slice(0, this.interims).join(" "), this.utteranceStart, this.audioBytes, { final: false }));
    }
  }

  private onControl(text: string): void {
    let type: unknown;
    try {
      type = (JSON.parse(text) as { type?: unknown }).type;
    } catch {
      type = undefined;
    }
    switch (type) {
      case "KeepAlive":
        this.keepAlives++;
        return;
      case "Finalize":
        this.finalizes++;
        return this.finalize();
      case "CloseStream":
        this.closeStreams++;
        return this.closeStream();
      default:
        // The service closes on a message it cannot read; so does the stand-in, to show client bugs.
        this.disconnect(1008, "DATA-0000: unknown control message");
    }
  }

  /** The utterance so far ends here; its final follows after the delay. Audio after this belongs to the next one. */
  private finalize(): void {
    const start = this.utteranceStart;
    const end = this.audioBytes;
    const transcript = end > start ? this.transcript() : "";
    if (end > start) {
      this.utteranceIndex++;
      this.utterances++;
    }
    this.utteranceStart = end;
    this.interims = 0;
    if (this.options.finalDelayMs === Number.POSITIVE_INFINITY) return;
    const final = this.results(transcript, start, end, { final: true });
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      this.send(final);
    }, this.options.finalDelayMs);
    this.pending.set(timer, final);
  }

  /** Flushes: the finals still waiting go now, then the summary, then the close. */
  private closeStream(): void {
    const finals = [...this.pending.values()];
    this.clearTimers();
    for (const final of finals) this.send(final);
    const metadata: DeepgramMetadata = {
      type: "Metadata",
      transaction_key: "deprecated",
      request_id: this.requestId,
      sha256: this.hash.copy().digest("hex"),
      created: new Date().toISOString(),
      duration: this.msOf(this.audioBytes) / 1000,
      channels: 1,
    };
    this.send(metadata);
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000);
  }

  private transcript(): string {
    const utterance: DeepgramStandinUtterance = {
      index: this.utteranceIndex,
      audioMs: this.msOf(this.audioBytes - this.utteranceStart),
      sampleRate: this.sampleRate,
    };
    return this.options.transcript ? this.options.transcript(utterance) : `stand in utterance ${utterance.index}`;
  }

  /** A Results message for the audio from byte `start` to `end`, with words spread evenly over it. */
  private results(transcript: string, start: number, end: number, { final }: { final: boolean }): DeepgramResults {
    const startSec = this.msOf(start) / 1000;
    const duration = this.msOf(end - start) / 1000;
    const texts = transcript.split(/\s+/).filter((word) => word !== "");
    const words: DeepgramWord[] = texts.map((word, i) => ({
      word: word.toLowerCase(),
      start: startSec + (duration * i) / texts.length,
      end: startSec + (duration * (i + 1)) / texts.length,
      confidence: 0.99,
      punctuated_word: word,
    }));
    return {
      type: "Results",
      channel_index: [0, 1],
      duration,
      start: startSec,
      is_final: final,
      speech_final: final,
      from_finalize: final,
      channel: { alternatives: [{ transcript, confidence: texts.length > 0 ? 0.99 : 0, words }] },
      metadata: {
        request_id: this.requestId,
        model_info: { name: this.params.model ?? "stand-in", version: "stand-in", arch: "stand-in" },
        model_uuid: "00000000-0000-0000-0000-000000000000",
      },
    };
  }

  private msOf(bytes: number): number {
    return (bytes / 2 / this.sampleRate) * 1000;
  }

  private send(message: DeepgramResults | DeepgramMetadata): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }

  private clearTimers(): void {
    for (const timer of this.pending.keys()) clearTimeout(timer);
    this.pending.clear();
  }
}
