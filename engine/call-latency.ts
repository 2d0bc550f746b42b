import type { TurnMetrics } from "./call-events.js";

/**
 * One agent turn's latency as a call's record keeps it (a turn that sent no audio and was not
 * cut short is left out): when the caller stopped speaking, and
 * how long after that each stage was reached, in ms. A turn that answers no caller speech (the
 * greeting, a goodbye for silence, the rest of a reply after a false interruption) counts
 * from the start of the call and has no end of speech. Stages that did not happen are null.
 */
export interface TurnLatency {
  turn_id: number;
  /** Seconds from the start of the call to the caller's last voiced frame; null when the turn answers no caller speech. */
  end_of_speech_at: number | null;
  /** The endpointing wait: the caller's turn was taken as over. */
  endpoint_ms: number | null;
  /** The recognizer's final transcript. */
  asr_final_ms: number | null;
  /** The dialogue's first text. */
  first_token_ms: number | null;
  /** The speech synthesiser's first audio. */
  first_audio_ms: number | null;
  /** The first agent frame sent to the caller. */
  voice_to_voice_ms: number | null;
  /** The caller cut the turn short. */
  interrupted: boolean;
}

export interface CallLatency {
  turns: TurnLatency[];
  /** Nearest-rank percentiles of voice-to-voice over the turns that answer the caller's speech; null with none. */
  voice_to_voice_p50_ms: number | null;
  voice_to_voice_p95_ms: number | null;
}

/** A call's turn metrics (on the engine's clock, the call started at `startedAt`) as its latency record. */
export function callLatency(turns: readonly TurnMetrics[], startedAt: number): CallLatency {
  // A turn that sent nothing and was not cut short (a reply that was only a key press) is no agent turn the caller heard.
  const heard = turns.filter((t) => t.firstFrameSentAt !== null || t.interrupted);
  const rows = heard.sort((a, b) => a.turnId - b.turnId).map((t) => turnLatency(t, startedAt));
  const answers = rows.flatMap((t) => (t.end_of_speech_at !== null && t.voice_to_voice_ms !== null ? [t.voice_to_voice_ms] : []));
  return { turns: rows, voice_to_voice_p50_ms: percentile(answers, 50), voice_to_voice_p95_ms: percentile(answers, 95) };
}

export function turnLatency(m: TurnMetrics, startedAt: number): TurnLatency {
  const from = m.endOfSpeechAt ?? startedAt;
  const since = (at: number | null) => (at === null ? null : Math.max(0, Math.round(at - from)));
  return {
    turn_id: m.turnId,
    end_of_speech_at: m.endOfSpeechAt === null ? null : Math.round(m.endOfSpeechAt - startedAt) / 1000,
    endpoint_ms: since(m.endpointAt),
    asr_final_ms: since(m.asrFinalAt),
    first_token_ms: since(m.firstTokenAt),
    first_audio_ms: since(m.firstTtsAudioAt),
    voice_to_voice_ms: since(m.firstFrameSentAt),
    interrupted: m.interrupted,
  };
}

/** Nearest rank: every figure reported is a measured one. */
function percentile(samples: readonly number[], p: number): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
