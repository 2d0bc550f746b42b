import type { Clock } from "../audio/clock.js";
import { FrameChunker } from "../audio/frame-chunker.js";
import { Resampler } from "../audio/resampler.js";
import type { AgentPlayout } from "../playout/agent-playout.js";
import type { TtsProvider } from "../providers/tts/tts-provider.js";
import { AsyncQueue } from "../stream/async-queue.js";
import type { MediaTransport } from "../transports/transport.js";
import type { AgentTurn } from "./agent-turn.js";

/**
 * Agent audio is resampled and queued only this far ahead of playback. A remote TTS streams
 * several times faster than real time; converting all of it on arrival made bursts that, with
 * many calls, held up the event loop and with it every call's frame pacing.
 */
const PLAYBACK_LEAD_MS = 500;

/** A TTS and the voice it speaks in. */
export interface Voice {
  tts: TtsProvider;
  voiceId: string;
}

export interface AgentSpeechConfig {
  clock: Clock;
  /** Where the turns' audio is queued for paced sending (the session plays, pauses and cuts it). */
  playout: AgentPlayout<AgentTurn>;
  /** The connection whose output rate the audio is converted to (read at each turn). */
  transport: Pick<MediaTransport, "outputSampleRate">;
  /** The agent's voice. */
  voice: Voice;
  /** The TTS that says fallback turns (see `fallbackVoice` for the voice it picks). */
  fallbackTts: TtsProvider;
}

/** What agent speech tells the call it belongs to. */
export interface AgentSpeechHost {
  /** `turn`'s first audio was queued while nothing played: the agent is speaking. */
  started(turn: AgentTurn): void;
  /** All of `turn`'s text has been said to the TTS and all its audio queued (`turn.complete`). */
  synthesized(turn: AgentTurn): void;
  /** The sentences or the TTS failed `turn` (never called once the turn was aborted). */
  failed(turn: AgentTurn, err: unknown): void;
}

/**
 * The agent's voice being made: a turn's sentences, as they come, go to the TTS (the agent's
 * voice, or the fallback voice for a fallback turn) and into the turn's text; its audio is
 * resampled to the connection's rate, cut into frames and queued no further than
 * PLAYBACK_LEAD_MS ahead of playback.
 */
export class AgentSpeech {
  private fallback: Voice;

  constructor(
    private readonly config: AgentSpeechConfig,
    private readonly host: AgentSpeechHost,
  ) {
    this.fallback = fallbackVoice(config.fallbackTts, config.voice.tts, config.voice.voiceId);
  }

  /** From the next turn on, the agent speaks in `voiceId` (another agent took the call over); turns under way keep their voice. */
  changeVoice(voiceId: string): void {
    this.config.voice = { ...this.config.voice, voiceId };
    this.fallback = fallbackVoice(this.config.fallbackTts, this.config.voice.tts, voiceId);
  }

  /** Synthesises `sentences` (with `tts` instead of the agent's TTS when given) and queues the audio for paced sending. */
  speak(turn: AgentTurn, sentences: AsyncIterable<string>, tts = this.config.voice.tts): void {
    const { clock, playout } = this.config;
    playout.begin(turn);
    // An early reply's audio waits, unheard, until it is the answer.
    if (turn.held) playout.pause();
    const outputRate = this.config.transport.outputSampleRate;
    const spoken = new AsyncQueue<string>();
    const tee = async () => {
      try {
        for await (const sentence of sentences) {
          if (turn.abort.signal.aborted) break;
          turn.metrics.firstTokenAt ??= clock.now();
          playout.addSentence(turn, sentence);
          turn.text = turn.text ? `${turn.text} ${sentence}` : sentence;
          spoken.push(sentence);
        }
        if (!turn.abort.signal.aborted) turn.textComplete = true;
        spoken.end();
      } catch (err) {
        spoken.fail(err);
      }
    };
    const synthesise = async () => {
      let resampler: Resampler | undefined;
      let chunker: FrameChunker | undefined;
      let sentenceIndex = 0;
      let lastSentences = 0;
      const voice = turn.kind === "fallback" ? this.fallback : { tts, voiceId: this.config.voice.voiceId };
      for await (const chunk of voice.tts.synthesize(spoken, { voiceId: voice.voiceId, signal: turn.abort.signal })) {
        if (turn.abort.signal.aborted) break;
        turn.metrics.firstTtsAudioAt ??= clock.now();
        await playout.room(turn, PLAYBACK_LEAD_MS, turn.abort.signal);
        if (turn.abort.signal.aborted) break;
        if (!resampler || !chunker) {
          resampler = new Resampler({ inputRate: chunk.sampleRate, outputRate });
          chunker = new FrameChunker(outputRate);
        }
        // The sentence the chunk says (a TTS that does not say: the newest one queued).
        if (chunk.piece !== undefined) sentenceIndex = chunk.piece;
        else if (turn.sentences.length > lastSentences) {
          sentenceIndex = turn.sentences.length - 1;
          lastSentences = turn.sentences.length;
        }
        for (const samples of chunker.push(resampler.push(chunk.samples))) this.enqueue(turn, samples, sentenceIndex);
      }
      if (resampler && chunker && !turn.abort.signal.aborted) {
        for (const samples of chunker.push(resampler.flush())) this.enqueue(turn, samples, sentenceIndex);
        for (const samples of chunker.flush()) this.enqueue(turn, samples, sentenceIndex);
      }
    };
    void Promise.all([tee(), synthesise()])
      .then(() => {
        turn.complete = true;
        this.host.synthesized(turn);
      })
      .catch((err: unknown) => {
        if (!turn.abort.signal.aborted) this.host.failed(turn, err);
      });
  }

  private enqueue(turn: AgentTurn, samples: Int16Array, sentenceIndex: number): void {
    if (turn.abort.signal.aborted) return;
    const { playout } = this.config;
    const starting = !playout.playing && !playout.paused;
    if (playout.enqueue(turn, { samples, sampleRate: this.config.transport.outputSampleRate }, sentenceIndex) && starting) this.host.started(turn);
  }
}

/**
 * The agent's own voice when the fallback TTS has it; else its first voice of the agent's
 * voice's gender (a caller should not hear a woman's voice turn into a man's), else its first.
 */
function fallbackVoice(tts: TtsProvider, agentTts: TtsProvider, agentVoiceId: string): Voice {
  const voices = tts.voices();
  const gender = agentTts.voices().find((v) => v.id === agentVoiceId)?.gender;
  const voiceId = voices.find((v) => v.id === agentVoiceId)?.id ?? voices.find((v) => v.gender === gender)?.id ?? voices[0]?.id;
  if (voiceId === undefined) throw new Error(`the fallback TTS ${tts.name} offers no voice`);
  return { tts, voiceId };
}
