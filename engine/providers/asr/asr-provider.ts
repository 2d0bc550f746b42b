import type { AudioFrame } from "../../audio/audio-frame.js";
import type { ExpectedSpeech } from "./expected-speech.js";

export interface AsrResult {
  type: "partial" | "final";
  text: string;
}

/**
 * Speech recognition for one call (the provider may share its recognizers between calls);
 * `transcribe` is called once per caller utterance with that utterance's frames (at the
 * transport's own sample rate; the provider converts as it needs) and yields partials and
 * exactly one final when the audio ends. Aborting the signal stops the work at once.
 *
 * The end of the audio is "finish now": the final of the words so far comes at once, without
 * waiting for silence after them or for an endpointing of the provider's own (the embedded
 * recognizer ends its utterance, Deepgram is sent `Finalize`). The turn detector decides when
 * the caller's words end, and it may finish an utterance at each short pause of a turn.
 *
 * `expected`: what the agent has just asked for, when the dialogue knows; a recognizer may
 * listen for it (the embedded one does) or ignore it.
 */
export interface AsrSession {
  transcribe(audio: AsyncIterable<AudioFrame>, signal: AbortSignal, expected?: ExpectedSpeech): AsyncIterable<AsrResult>;
  close(): Promise<void>;
}

export interface AsrProvider {
  readonly name: string;
  /**
   * Opens recognition for one call (fails when the provider cannot recognize at all).
   * `sampleRate` is the transport's input rate: every frame of the call's utterances has it.
   */
  open(options: { language: string; sampleRate: number; signal: AbortSignal }): Promise<AsrSession>;
  /** Releases what the provider holds for all calls (recognizer processes); none for stateless ones. */
  close?(): Promise<void>;
}
