import type { ChatStandinOptions } from "../../scripts/standins/openai-chat-standin.js";
import { startStandinServer, type StandinServer } from "../../scripts/standins/standin-server.js";
import { NativeMediaClient } from "./media-client.js";
import { startTestApp, type TestAccount, type TestApp } from "./test-app.js";

/**
 * The settings of a service whose speech recognition and synthesis (and, with `chat`, its
 * dialogue) are the stand-ins served at `url` (scripts/standins/standin-server.ts).
 */
export function standinProviders(url: string, options: { chat?: boolean } = {}): Record<string, string> {
  return {
    PARLEY_ENGINE: "1",
    PARLEY_ASR_PROVIDER: "deepgram",
    PARLEY_ASR_URL: url,
    ...(options.chat ? { PARLEY_LLM_PROVIDER: "openai", PARLEY_LLM_URL: url } : {}),
    PARLEY_TTS_PROVIDER: "openai",
    PARLEY_TTS_URL: url,
  };
}

/** Stand-in delays for tests about what is said, not when: each stage answers within 50 ms. */
export const QUICK_STANDINS = { asrFinalMs: 50, llmFirstTokenMs: 50, llmTokenMs: 5, ttsFirstByteMs: 50 } as const;

/**
 * A service whose speech (and, with `chatReply`, its dialogue: else the rules dialogue) are
 * quick stand-ins, with an account holding 100 credits. The stand-in recognizer hears the
 * lines `callerSays()` gives (asked at each call, so a test can script the next one) in turn
 * in whatever the caller sends, then "goodbye".
 */
export async function startStandinApp(options: { chatReply?: ChatStandinOptions["reply"]; callerSays: () => readonly string[] }): Promise<{ standins: StandinServer; app: TestApp; acct: TestAccount; close(): Promise<void> }> {
  const { chatReply, callerSays } = options;
  const standins = await startStandinServer(QUICK_STANDINS, 0, { ...(chatReply ? { chatReply } : {}), asrTranscript: ({ index }) => callerSays()[index - 1] ?? "goodbye" });
  const app = await startTestApp({}, standinProviders(standins.url, { chat: chatReply !== undefined }));
  const acct = await app.account({ credits: 100 });
  return {
    standins,
    app,
    acct,
    close: async () => {
      await app.close();
      await standins.close();
    },
  };
}

/**
 * How long the agent must stay quiet before its answer counts as finished. With the stand-ins'
 * 50 ms delays the lines of one answer (a hand-off's, a tool call's) are less than 300 ms apart.
 */
export const AGENT_QUIET_MS = 500;

/**
 * A native-protocol call to `agentId`: after the greeting the caller says `line` `turns` times,
 * each time waiting until the agent has finished answering, then hangs up. Resolves with the
 * client once the call has closed (its messages hold the transcript and tool calls).
 */
export async function scriptedCall(baseUrl: string, key: string, agentId: string, line: Int16Array, turns: number): Promise<NativeMediaClient> {
  const client = await NativeMediaClient.connect(`${baseUrl.replace(/^http/, "ws")}/media/ws?agent_id=${agentId}&sample_rate=16000`, key, 16000);
  client.startStreaming();
  await client.waitForAgentSilence(AGENT_QUIET_MS, 0, 15_000);
  for (let i = 0; i < turns; i++) {
    const saidAt = await client.say(line);
    await client.waitForAgentSilence(AGENT_QUIET_MS, saidAt, 15_000);
  }
  client.hangUp();
  await client.closed;
  return client;
}

/** What the agent said on the call, line by line. */
export function agentLines(client: NativeMediaClient): string[] {
  return client.messages.filter((m) => m.message.type === "transcript" && m.message.role === "agent").map((m) => m.message.content as string);
}
