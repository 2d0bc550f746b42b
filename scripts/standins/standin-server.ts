import http from "node:http";
import type { AddressInfo } from "node:net";
import { deepgramStandin, type DeepgramStandinOptions } from "./deepgram-standin.js";
import { chatCompletionsStandin, type ChatStandinOptions } from "./openai-chat-standin.js";
import { speechStandin, type SpeechRequest } from "./openai-speech-standin.js";
import { voicedSpeech } from "./voiced-speech.js";

/**
 * The three cloud stand-ins on one loopback HTTP server: Deepgram-style streaming ASR
 * (`/v1/listen`), OpenAI-style chat completions and speech. They answer with fixed delays and
 * canned content, so a benchmark with them measures the media engine apart from model compute.
 */
export interface StandinDelays {
  /** `Finalize` -> final transcript. */
  asrFinalMs: number;
  /** Chat request -> first token. */
  llmFirstTokenMs: number;
  /** Between tokens. */
  llmTokenMs: number;
  /** Speech request -> first audio byte. */
  ttsFirstByteMs: number;
}

/** Plausible figures for hosted services from a nearby region (Deepgram finalize, a small GPT model, OpenAI tts-1). */
export const DEFAULT_STANDIN_DELAYS: Readonly<StandinDelays> = Object.freeze({ asrFinalMs: 150, llmFirstTokenMs: 300, llmTokenMs: 15, ttsFirstByteMs: 200 });

export interface StandinServer {
  url: string;
  /** The speech requests answered so far (text and voice), for tests that check who said what. */
  speechRequests(): SpeechRequest[];
  close(): Promise<void>;
}

export interface StandinServerOptions {
  /** The chat stand-in's answer to each request (tests make it fail). Default: its canned reply. */
  chatReply?: ChatStandinOptions["reply"];
  /** What the speech-recognition stand-in "hears" in each utterance (tests script a caller). Default: `stand in utterance <index>`. */
  asrTranscript?: DeepgramStandinOptions["transcript"];
}

export async function startStandinServer(delays: StandinDelays, port = 0, options: StandinServerOptions = {}): Promise<StandinServer> {
  const asr = deepgramStandin({ finalDelayMs: delays.asrFinalMs, interimEveryMs: 200, ...(options.asrTranscript ? { transcript: options.asrTranscript } : {}) });
  const chat = chatCompletionsStandin({ firstTokenDelayMs: delays.llmFirstTokenMs, tokenIntervalMs: delays.llmTokenMs, reply: options.chatReply });
  const speech = speechStandin({ firstByteDelayMs: delays.ttsFirstByteMs });
  // Builds the speech loop now (~0.5 s) rather than inside the first answer's time to first byte.
  voicedSpeech("", 1, 24000);
  const server = http.createServer((req, res) => {
    if (chat.handle(req, res) || speech.handle(req, res)) return;
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no stand-in at ${req.url}` } }));
  });
  server.on("upgrade", (req, socket, head) => {
    if (!asr.handleUpgrade(req, socket, head)) socket.destroy();
  });
  // Hundreds of simultaneous calls keep as many streams and requests open.
  server.maxConnections = 10_000;
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    speechRequests: () => speech.requests(),
    close: async () => {
      asr.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
