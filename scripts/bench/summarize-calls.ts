import { METRIC_NAMES, type MetricName, type ModeResult } from "./bench-result.js";
import type { Conversation, EndpointingMode } from "./conversation.js";
import { summarize, type Summary } from "./percentiles.js";
import type { CallResult, ServerStages } from "./play-conversation.js";

/** Every sample of a metric over `calls`: client measurements per call or turn, server stages per answered turn. */
export function samplesOf(calls: readonly CallResult[], name: MetricName): number[] {
  switch (name) {
    case "greeting_ms":
      return calls.flatMap((c) => (c.greeting_ms === null ? [] : [c.greeting_ms]));
    case "voice_to_voice_ms":
      return calls.flatMap((c) => c.turns.map((t) => t.voice_to_voice_ms));
    case "barge_in_ms":
      return calls.flatMap((c) => c.barge_in_ms);
    case "barge_in_stop_ms":
      return calls.flatMap((c) => c.barge_in_stop_ms);
    case "jitter_ms":
      return calls.flatMap((c) => c.jitter_ms);
    default:
      return calls.flatMap((c) => c.turns.flatMap((t) => (t.server && t.server[name as keyof ServerStages] !== null ? [t.server[name as keyof ServerStages]!] : [])));
  }
}

export function metricsOf(calls: readonly CallResult[]): Record<MetricName, Summary> {
  return Object.fromEntries(METRIC_NAMES.map((name) => [name, summarize(samplesOf(calls, name))])) as Record<MetricName, Summary>;
}

/** Multi-line `say` steps the caller speaks when the agent is quiet: where a false endpoint can happen. */
export function multiLineSteps(conversation: Conversation): number {
  return conversation.steps.filter((s) => "say" in s && s.over_agent_ms === undefined && s.say.length > 1).length;
}

/** `say` steps spoken while the agent is quiet and timed: each one answered gives a voice-to-voice sample. */
export function timedSteps(conversation: Conversation): number {
  return conversation.steps.filter((s) => "say" in s && s.over_agent_ms === undefined && !("timed" in s && s.timed === false)).length;
}

/** The figures of one endpointing mode from its calls (`conversations`: the ones the run played). */
export function modeResult(mode: EndpointingMode, endpointingMs: number, calls: readonly CallResult[], conversations: readonly Conversation[]): ModeResult {
  const own = calls.filter((c) => c.endpointing_mode === mode);
  const byName = new Map(conversations.map((c) => [c.name, c]));
  const byConversation: Record<string, number> = {};
  for (const c of conversations) if (multiLineSteps(c) > 0) byConversation[c.name] = 0;
  for (const call of own) if (call.conversation in byConversation) byConversation[call.conversation]! += call.false_endpoints;
  const checked = own.filter((c) => c.outcome !== null);
  const required = checked.filter((c) => c.outcome!.required);
  const notRequired = checked.filter((c) => !c.outcome!.required);
  return {
    endpointing_mode: mode,
    endpointing_ms: endpointingMs,
    calls: own.length,
    metrics: metricsOf(own),
    false_endpoints: {
      total: own.reduce((n, c) => n + c.false_endpoints, 0),
      // Calls that failed early may not have played every step: counted anyway (the rate is approximate then).
      steps: own.reduce((n, c) => n + (byName.get(c.conversation) ? multiLineSteps(byName.get(c.conversation)!) : 0), 0),
      calls: own.filter((c) => c.false_endpoints > 0).length,
      by_conversation: byConversation,
    },
    backchannels: {
      spoken: own.reduce((n, c) => n + c.backchannels, 0),
      false_stops: own.reduce((n, c) => n + c.backchannel_false_stops, 0),
      resumes: own.reduce((n, c) => n + c.backchannel_resumes, 0),
    },
    early_replies: {
      prepared: own.reduce((n, c) => n + c.early_replies, 0),
      wasted: own.reduce((n, c) => n + c.early_replies_wasted, 0),
    },
    outcomes: {
      required: required.length,
      met: required.filter((c) => c.outcome!.passed).length,
      not_required: notRequired.length,
      not_required_met: notRequired.filter((c) => c.outcome!.passed).length,
    },
  };
}

/** A call that fails the run: an error, or an outcome its mode had to meet and did not. */
export function failedCall(c: CallResult): boolean {
  return c.error !== null || (c.outcome !== null && c.outcome.required && !c.outcome.passed);
}
