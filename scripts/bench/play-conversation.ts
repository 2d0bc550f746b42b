import type { Conversation, Expectation } from "./conversation.js";
import { resolveExpectedValue } from "./conversation.js";
import { clientNow, type MediaClient } from "./media-caller.js";

export type Protocol = "native" | "twilio";

/** The server's stage timings for one answered turn (ms), from its `turn_metrics`. */
export interface ServerStages {
  endpointing_wait_ms: number | null;
  asr_ms: number | null;
  first_token_ms: number | null;
  first_tts_audio_ms: number | null;
  first_frame_sent_ms: number | null;
  server_voice_to_voice_ms: number | null;
  /** Client voice-to-voice minus end of speech -> first TTS audio on the server: transport, VAD lag, framing. */
  pipeline_overhead_ms: number | null;
}

export interface TurnSample {
  voice_to_voice_ms: number;
  server: ServerStages | null;
}

export interface CallResult {
  conversation: string;
  protocol: Protocol;
  concurrency: number;
  lane: number;
  greeting_ms: number | null;
  turns: TurnSample[];
  barge_in_ms: number[];
  /** |inter-arrival - 20 ms| of agent audio frames within continuous agent speech. */
  jitter_ms: number[];
  /** null when not checked (stand-in providers) or when the call failed first (see `error`). */
  outcome: { passed: boolean; failures: string[] } | null;
  error: string | null;
}

const REPLY_TIMEOUT_MS = 15_000;
/** Silence that marks the end of an agent reply (the engine pauses less than this between sentences). */
const AGENT_QUIET_MS = 900;
/** Inter-arrival gaps above this are pauses between replies, not pacing jitter. */
const BURST_GAP_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function until<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function isClear(message: any): boolean {
  return message.type === "clear" || message.event === "clear";
}

/** Plays one conversation on a connected client and measures it on the client's clock. */
export async function playConversation(
  client: MediaClient,
  conversation: Conversation,
  audio: (line: string) => Int16Array,
  meta: { protocol: Protocol; concurrency: number; lane: number; seed: number },
  /** How to learn what the call did; null: its outcome is not checked. */
  observe: ((client: MediaClient) => Promise<ObservedCall>) | null,
): Promise<CallResult> {
  const { seed, ...where } = meta;
  const result: CallResult = { conversation: conversation.name, ...where, greeting_ms: null, turns: [], barge_in_ms: [], jitter_ms: [], outcome: null, error: null };
  const spokenTurns: number[] = [];
  try {
    client.setLineNoise(conversation.line_noise_rms, seed);
    client.startStreaming();
    const greetingAt = await until(() => client.firstAudioAfter(0), REPLY_TIMEOUT_MS, "the greeting");
    result.greeting_ms = greetingAt - client.openedAt;
    let mark = 0;
    for (const step of conversation.steps) {
      if ("dtmf" in step) {
        client.sendDtmf(step.dtmf);
        continue;
      }
      if ("silence_ms" in step) {
        await sleep(step.silence_ms);
        mark = clientNow();
        continue;
      }
      const speech = joinLines(step.say.map(audio), step.gap_ms ?? 0, client.sampleRate);
      if (step.over_agent_ms !== undefined) {
        const agentStarted = await until(() => client.firstAudioAfter(mark), REPLY_TIMEOUT_MS, "agent speech to talk over");
        await sleep(agentStarted + step.over_agent_ms - clientNow());
        const spoken = await client.speak(speech);
        const clear = await until(() => client.messages.find((m) => m.at >= spoken.startedAt && isClear(m.message)), 3000, "clear").catch(() => null);
        if (clear) result.barge_in_ms.push(clear.at - spoken.startedAt);
        mark = spoken.endedAt;
      } else {
        await client.waitForAgentSilence(AGENT_QUIET_MS, mark, REPLY_TIMEOUT_MS);
        const spoken = await client.speak(speech);
        const replyAt = await until(() => client.firstAudioAfter(spoken.endedAt), REPLY_TIMEOUT_MS, `a reply to ${step.say.join("+")}`);
        if (step.timed !== false) {
          result.turns.push({ voice_to_voice_ms: replyAt - spoken.endedAt, server: null });
          spokenTurns.push(spoken.endedAt);
        }
        mark = spoken.endedAt;
      }
    }
    // Let the last reply play out (the greeting counts: a silent caller still hears it).
    await client.waitForAgentSilence(AGENT_QUIET_MS, 0, REPLY_TIMEOUT_MS).catch(() => undefined);
    // A call the agent ends (transfer) closes by itself; give it a moment before hanging up.
    await Promise.race([client.closed, sleep(conversation.expect.end_reason ? 5000 : 200)]);
  } catch (err) {
    result.error = (err as Error).message;
  }
  client.hangUp();
  await Promise.race([client.closed, sleep(3000)]);
  client.close();

  spokenTurns.forEach((endedAt, i) => {
    const metrics = client.messages.find((m) => m.at >= endedAt && m.message.type === "turn_metrics" && m.message.end_of_speech_at !== null)?.message;
    if (metrics) result.turns[i]!.server = stagesOf(metrics, result.turns[i]!.voice_to_voice_ms);
  });
  result.jitter_ms = pacingJitter(client.audio.map((a) => a.at));
  if (result.error === null && observe) {
    try {
      result.outcome = checkOutcome(await observe(client), conversation.expect);
    } catch (err) {
      result.error = `outcome not observable: ${(err as Error).message}`;
    }
  }
  return result;
}

function joinLines(lines: Int16Array[], gapMs: number, rate: number): Int16Array {
  const gap = Math.round((gapMs / 1000) * rate);
  const out = new Int16Array(lines.reduce((n, l) => n + l.length, 0) + gap * (lines.length - 1));
  let at = 0;
  for (const line of lines) {
    out.set(line, at);
    at += line.length + gap;
  }
  return out;
}

function diff(later: number | null, earlier: number | null): number | null {
  return later === null || earlier === null ? null : later - earlier;
}

function stagesOf(m: any, clientVoiceToVoice: number): ServerStages {
  const speechToTts = diff(m.first_tts_audio_at, m.end_of_speech_at);
  return {
    endpointing_wait_ms: diff(m.endpoint_at, m.end_of_speech_at),
    asr_ms: diff(m.asr_final_at, m.endpoint_at),
    first_token_ms: diff(m.first_token_at, m.asr_final_at),
    first_tts_audio_ms: diff(m.first_tts_audio_at, m.first_token_at),
    first_frame_sent_ms: diff(m.first_frame_sent_at, m.first_tts_audio_at),
    server_voice_to_voice_ms: m.voice_to_voice_ms,
    pipeline_overhead_ms: speechToTts === null ? null : clientVoiceToVoice - speechToTts,
  };
}

function pacingJitter(arrivals: number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < arrivals.length; i++) {
    const gap = arrivals[i]! - arrivals[i - 1]!;
    if (gap < BURST_GAP_MS) out.push(Math.abs(gap - 20));
  }
  return out;
}

/** What a call did, as far as the outcome checks go. */
export interface ObservedCall {
  /** Everything the agent said, lower case. */
  agentText: string;
  userTurns: number;
  interrupted: boolean;
  /** Why the call ended, when known. */
  endReason: string | null;
  toolCalls: Array<{ name: string; arguments: Record<string, unknown> }>;
}

/** The native protocol streams transcript, tool calls, interruptions and the end reason as events. */
export function observeNativeEvents(client: MediaClient): ObservedCall {
  const messages = client.messages.map((m) => m.message);
  return {
    agentText: messages
      .filter((m) => m.type === "transcript" && m.role === "agent")
      .map((m) => String(m.content).toLowerCase())
      .join(" "),
    userTurns: messages.filter((m) => m.type === "transcript" && m.role === "user").length,
    interrupted: messages.some((m) => m.type === "interruption"),
    endReason: messages.find((m) => m.type === "ended")?.reason ?? null,
    toolCalls: messages.filter((m) => m.type === "tool_call").map((m) => ({ name: m.name, arguments: m.arguments ?? {} })),
  };
}

function checkOutcome(observed: ObservedCall, expect: Expectation): { passed: boolean; failures: string[] } {
  const failures: string[] = [];
  if (expect.tool_call) {
    const { name, arguments: args = {} } = expect.tool_call;
    const call = observed.toolCalls.find((c) => c.name === name);
    if (!call) failures.push(`no ${name} tool call`);
    for (const [key, value] of Object.entries(args)) {
      const want = resolveExpectedValue(value);
      if (call && call.arguments[key] !== want) failures.push(`${name}.${key} = ${JSON.stringify(call.arguments[key])}, expected ${JSON.stringify(want)}`);
    }
  }
  if (expect.end_reason !== undefined && observed.endReason !== expect.end_reason) failures.push(`ended ${observed.endReason ?? "(not ended)"}, expected ${expect.end_reason}`);
  if (expect.interrupted !== undefined && observed.interrupted !== expect.interrupted) failures.push(observed.interrupted ? "the agent was interrupted" : "no interruption");
  if (expect.agent_says !== undefined && !observed.agentText.includes(expect.agent_says.toLowerCase())) failures.push(`the agent never said "${expect.agent_says}"`);
  if (expect.user_turns !== undefined && observed.userTurns !== expect.user_turns) failures.push(`${observed.userTurns} caller turns, expected ${expect.user_turns}`);
  return { passed: failures.length === 0, failures };
}
