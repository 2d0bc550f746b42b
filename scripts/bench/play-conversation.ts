import type { Conversation, EndpointingMode, Expectation, SayStep } from "./conversation.js";
import { expectedIn, gapsOf, resolveExpectedValue } from "./conversation.js";
import { clientNow, type MediaClient, type SpokenAt } from "./media-caller.js";
import { agentStopAfter, backchannelVerdict, falseEndpoints, type BackchannelWindow, type LineSent } from "./turn-taking.js";

export type Protocol = "native" | "twilio";

/** The server's stage timings for one answered turn (ms), from its `turn_metrics`. */
export interface ServerStages {
  endpointing_wait_ms: number | null;
  asr_ms: number | null;
  first_token_ms: number | null;
  first_tts_audio_ms: number | null;
  first_frame_sent_ms: number | null;
  server_voice_to_voice_ms: number | null;
  /**
   * Client voice-to-voice minus the server's end of speech -> first audio it could send (its
   * first TTS audio, or the end of the turn when the reply was prepared early): transport, VAD
   * lag, framing.
   */
  pipeline_overhead_ms: number | null;
}

export interface TurnSample {
  voice_to_voice_ms: number;
  server: ServerStages | null;
}

export interface CallResult {
  conversation: string;
  protocol: Protocol;
  /** The agent's `endpointing_mode` (its `endpointing_ms` is the mode's, see settings). */
  endpointing_mode: EndpointingMode;
  concurrency: number;
  lane: number;
  greeting_ms: number | null;
  /** Answered `say` steps; a step with a false endpoint has none (its first reply was to part of it). */
  turns: TurnSample[];
  /** Caller speech over the agent (its first frame) -> `clear` (the reply is cut); backchannels are not counted here. */
  barge_in_ms: number[];
  /**
   * The same speech -> the agent's audio stopping (its last frame before over 300 ms without
   * any, or the `clear`, whichever is first). A playout that pauses at speech stops before the
   * interruption is decided, without a `clear`.
   */
  barge_in_stop_ms: number[];
  /** Times agent audio started while a multi-line `say` step still had lines to play (see turn-taking.ts). */
  false_endpoints: number;
  /** Steps spoken over the agent in a conversation that expects no interruption. */
  backchannels: number;
  /** Of those, how many the agent stopped for (a `clear`, or its audio missing for over 300 ms) ... */
  backchannel_false_stops: number;
  /** ... and how many of those stops it picked up again before the caller's next step. */
  backchannel_resumes: number;
  /** Replies the server prepared before the caller's turn was over (`early_reply` messages, native only), and how many it dropped unheard. */
  early_replies: number;
  early_replies_wasted: number;
  /** |inter-arrival - 20 ms| of agent audio frames within continuous agent speech. */
  jitter_ms: number[];
  /**
   * null when not checked (stand-in providers) or when the call failed first (see `error`).
   * `required` is false in an endpointing mode outside the conversation's `expect_modes`:
   * recorded, but not a failure.
   */
  outcome: { passed: boolean; failures: string[]; required: boolean } | null;
  error: string | null;
}

const REPLY_TIMEOUT_MS = 15_000;
/** How long after caller speech over the agent its `clear` (or its audio stopping) is waited for. */
const BARGE_IN_WINDOW_MS = 3000;
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
  meta: { protocol: Protocol; endpointing_mode: EndpointingMode; concurrency: number; lane: number; seed: number },
  /** How to learn what the call did; null: its outcome is not checked. */
  observe: ((client: MediaClient) => Promise<ObservedCall>) | null,
): Promise<CallResult> {
  const { seed, ...where } = meta;
  const result = emptyCallResult(conversation.name, where);
  const spokenTurns: number[] = [];
  /** Backchannels (over-agent steps where no interruption is expected), and when each caller step began. */
  const backchannels: Array<{ startedAt: number; endedAt: number; step: number }> = [];
  /** When caller speech over the agent began, for the other over-agent steps (barge-ins). */
  const bargeIns: number[] = [];
  const stepStarts: Array<number | null> = conversation.steps.map(() => null);
  const backchannelsExpected = conversation.expect.interrupted === false;
  try {
    client.setLineNoise(conversation.line_noise_rms, seed);
    client.startStreaming();
    const greetingAt = await until(() => client.firstAudioAfter(0), REPLY_TIMEOUT_MS, "the greeting");
    result.greeting_ms = greetingAt - client.openedAt;
    let mark = 0;
    /** Consecutive steps over the agent are all timed from the first agent audio after this (the last other step's end). */
    let overAgentFrom = 0;
    for (const [index, step] of conversation.steps.entries()) {
      if ("dtmf" in step) {
        stepStarts[index] = overAgentFrom = clientNow();
        client.sendDtmf(step.dtmf);
        continue;
      }
      if ("silence_ms" in step) {
        await sleep(step.silence_ms);
        mark = overAgentFrom = clientNow();
        continue;
      }
      const { speech, marks } = joinLines(step.say.map(audio), gapsOf(step), client.sampleRate);
      if (step.over_agent_ms !== undefined) {
        // A second step over the same long agent turn is timed from that turn's first audio too
        // (the agent may have paused for the first one in between).
        const agentStarted = await until(() => client.firstAudioAfter(overAgentFrom), REPLY_TIMEOUT_MS, "agent speech to talk over");
        await sleep(agentStarted + step.over_agent_ms - clientNow());
        const spoken = await client.speak(speech);
        stepStarts[index] = spoken.startedAt;
        const clear = await until(() => client.messages.find((m) => m.at >= spoken.startedAt && isClear(m.message)), BARGE_IN_WINDOW_MS, "clear").catch(() => null);
        // A backchannel's `clear` is a false stop (counted after the call), not a barge-in.
        if (backchannelsExpected) backchannels.push({ startedAt: spoken.startedAt, endedAt: spoken.endedAt, step: index });
        else {
          bargeIns.push(spoken.startedAt);
          if (clear) result.barge_in_ms.push(clear.at - spoken.startedAt);
        }
        mark = spoken.endedAt;
      } else {
        await client.waitForAgentSilence(AGENT_QUIET_MS, mark, REPLY_TIMEOUT_MS);
        const spoken = await client.speak(speech, marks);
        stepStarts[index] = spoken.startedAt;
        const replyAt = await until(() => client.firstAudioAfter(spoken.endedAt), REPLY_TIMEOUT_MS, `a reply to ${step.say.join("+")}`);
        const early = falseEndpoints(
          client.audio.map((a) => a.at),
          linesSent(step, spoken),
        ).length;
        result.false_endpoints += early;
        if (step.timed !== false && early === 0) {
          result.turns.push({ voice_to_voice_ms: replyAt - spoken.endedAt, server: null });
          spokenTurns.push(spoken.endedAt);
        }
        mark = overAgentFrom = spoken.endedAt;
      }
    }
    // Let the last reply play out (the greeting counts: a silent caller still hears it).
    await client.waitForAgentSilence(AGENT_QUIET_MS, 0, REPLY_TIMEOUT_MS).catch(() => undefined);
    // A call the agent ends (transfer) closes by itself; give it a moment before hanging up.
    await Promise.race([client.closed, sleep(conversation.expect.end_reason ? 5000 : 200)]);
  } catch (err) {
    result.error = (err as Error).message;
  }
  const hungUpAt = clientNow();
  client.hangUp();
  await Promise.race([client.closed, sleep(3000)]);
  client.close();

  const arrivals = client.audio.map((a) => a.at);
  const clears = client.messages.filter((m) => isClear(m.message)).map((m) => m.at);
  for (const startedAt of bargeIns) {
    const stoppedAt = agentStopAfter(arrivals, clears, startedAt, BARGE_IN_WINDOW_MS);
    if (stoppedAt !== null) result.barge_in_stop_ms.push(stoppedAt - startedAt);
  }
  for (const b of backchannels) {
    const next = stepStarts.slice(b.step + 1).find((at): at is number => at !== null) ?? hungUpAt;
    const window: BackchannelWindow = { startedAt: b.startedAt, endedAt: b.endedAt, until: next };
    const verdict = backchannelVerdict(arrivals, clears, window);
    result.backchannels += 1;
    if (verdict.stoppedAt !== null) result.backchannel_false_stops += 1;
    if (verdict.resumedAt !== null) result.backchannel_resumes += 1;
  }

  for (const { message } of client.messages) {
    if (message.type !== "early_reply") continue;
    result.early_replies += 1;
    if (message.used === false) result.early_replies_wasted += 1;
  }

  spokenTurns.forEach((endedAt, i) => {
    const metrics = client.messages.find((m) => m.at >= endedAt && m.message.type === "turn_metrics" && m.message.end_of_speech_at !== null)?.message;
    if (metrics) result.turns[i]!.server = stagesOf(metrics, result.turns[i]!.voice_to_voice_ms);
  });
  result.jitter_ms = pacingJitter(client.audio.map((a) => a.at));
  if (result.error === null && observe) {
    try {
      result.outcome = { ...checkOutcome(await observe(client), conversation.expect), required: expectedIn(conversation, meta.endpointing_mode) };
    } catch (err) {
      result.error = `outcome not observable: ${(err as Error).message}`;
    }
  }
  return result;
}

/** A call that has not run yet (or failed before anything was measured). */
export function emptyCallResult(conversation: string, where: Pick<CallResult, "protocol" | "endpointing_mode" | "concurrency" | "lane">): CallResult {
  return {
    conversation,
    ...where,
    greeting_ms: null,
    turns: [],
    barge_in_ms: [],
    barge_in_stop_ms: [],
    false_endpoints: 0,
    backchannels: 0,
    backchannel_false_stops: 0,
    backchannel_resumes: 0,
    early_replies: 0,
    early_replies_wasted: 0,
    jitter_ms: [],
    outcome: null,
    error: null,
  };
}

/**
 * Lines joined by their gaps of silence, with `marks`: each line's first and last sample, in
 * order, for `MediaClient.speak` to time.
 */
export function joinLines(lines: readonly Int16Array[], gapsMs: readonly number[], rate: number): { speech: Int16Array; marks: number[] } {
  const gaps = lines.map((_, i) => (i < lines.length - 1 ? Math.round(((gapsMs[i] ?? 0) / 1000) * rate) : 0));
  const out = new Int16Array(lines.reduce((n, l, i) => n + l.length + gaps[i]!, 0));
  const marks: number[] = [];
  let at = 0;
  for (const [i, line] of lines.entries()) {
    out.set(line, at);
    marks.push(at, at + Math.max(0, line.length - 1));
    at += line.length + gaps[i]!;
  }
  return { speech: out, marks };
}

/** Each line's first and last frame times, from the marks `joinLines` made. */
function linesSent(step: SayStep, spoken: SpokenAt): LineSent[] {
  return step.say.map((_, i) => ({ startedAt: spoken.marksAt[2 * i]!, endedAt: spoken.marksAt[2 * i + 1]! }));
}

function diff(later: number | null, earlier: number | null): number | null {
  return later === null || earlier === null ? null : later - earlier;
}

function stagesOf(m: any, clientVoiceToVoice: number): ServerStages {
  // When the server could first send audio: its first TTS audio, or the end of the turn for a
  // reply prepared early (held until then).
  const ready = m.first_tts_audio_at === null || m.endpoint_at === null ? m.first_tts_audio_at : Math.max(m.first_tts_audio_at, m.endpoint_at);
  const speechToTts = diff(ready, m.end_of_speech_at);
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
