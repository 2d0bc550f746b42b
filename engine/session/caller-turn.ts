import type { AudioFrame } from "../audio/audio-frame.js";
import type { Clock, TimerHandle } from "../audio/clock.js";
import type { CallEvent } from "../call-events.js";
import type { AsrSession } from "../providers/asr/asr-provider.js";
import type { ExpectedSpeech } from "../providers/asr/expected-speech.js";
import { AsyncQueue } from "../stream/async-queue.js";
import { isBackchannel } from "../turn/backchannel.js";
import { transcriptCompleteness, type TurnCompleteness } from "../turn/turn-completeness.js";
import type { TurnDetector } from "../turn/turn-detector.js";
import type { CallerFrame } from "./caller-input.js";

/**
 * How long an ending call waits for the recognizer's final of the caller's last words (a caller
 * who speaks, then hangs up): they go into the transcript, unanswered.
 */
export const LAST_WORDS_WAIT_MS = 2_000;

/**
 * The caller's turn from its start to its end: one part, or several when the turn detector
 * paused it (each part is recognized on its own, finished at its pause).
 */
export interface Utterance {
  /** The audio of the part being spoken; undefined during a pause. */
  audio: AsyncQueue<AudioFrame> | undefined;
  /** Each part's final text, in order. */
  parts: Array<Promise<string>>;
  /** The finals of the parts before, then the partial of the one being spoken. */
  partial: string;
  startMs: number;
  /** Wall time the last voiced frame arrived. */
  lastVoicedAt: number;
  /** Wall time the last part's final came. */
  finalAt: number | null;
  /** What the agent had asked for when the turn began (none while it was still speaking): every part is listened to for it. */
  expected: ExpectedSpeech | undefined;
}

export interface CallerTurnConfig {
  clock: Clock;
  /** Signals the turn's start, pauses and end (it has seen each frame before it comes here). */
  turnDetector: TurnDetector;
  /** The caller's audio: the pre-roll a part starts with, and the input timeline a pause is judged at. */
  input: { takePreRoll(): AudioFrame[]; readonly inputMs: number };
  /** Aborted when the call ends: recognition (and the recognizer's opening) stops. */
  signal: AbortSignal;
}

/** What the caller's turn needs of the call it belongs to, and what it tells it. */
export interface CallerTurnHost {
  /** The call is ending: words recognized now are not judged, and a recognizer opened now is given back. */
  isEnding(): boolean;
  /** A `partial_transcript` of the turn's words so far. */
  report(event: Extract<CallEvent, { type: "partial_transcript" }>): void;
  /** The caller starts (or, after a pause, resumes) speaking. */
  spoke(): void;
  /** A voiced caller frame arrived at `atMs` (wall time). */
  voiced(atMs: number): void;
  /** The turn's words so far, at each partial and each frame of a part being spoken (barge-in is judged on them). */
  heard(words: string): void;
  /** Whether the agent is speaking: a backchannel over it makes a whole turn. */
  isAgentSpeaking(): boolean;
  /** What the agent's last question asked for, when the dialogue knows (the recognizer may listen for it). */
  expectedSpeech(): ExpectedSpeech | undefined;
  /** The dialogue's judgement of `words` as a whole turn, when it has one. */
  judgeTurn(words: string): TurnCompleteness | undefined;
  /** The caller paused on `words` that may end their turn (complete or unknown), and it waits a little longer. */
  mayEnd(utterance: Utterance, words: string): void;
  /** The turn ended (at wall time `endpointAt`) and `text` is all its words ("" for a noise). */
  ended(utterance: Utterance, text: string, endpointAt: number): void;
  /** The turn ended, but the recognizer failed its words. */
  failed(utterance: Utterance, endpointAt: number, err: unknown): void;
  /** Handling an ended turn threw (a bug): the call cannot go on. */
  broken(err: unknown): void;
}

/**
 * The caller's turn being recognized: the turn detector's signals open, pause and end it, each
 * part is recognized on its own by the call's recognizer (partials reported), and the words at
 * a pause are judged (the turn ends, or may end: see `mayEnd`). What a finished turn leads to
 * is the session's.
 */
export class CallerTurn {
  private asr: AsrSession | undefined;
  /** The recognizer being opened: speech during the greeting waits for it rather than being lost. */
  private asrReady: Promise<AsrSession> | undefined;
  private utterance: Utterance | undefined;
  /** Turns that have ended and wait for their final (see `end`). */
  private readonly recognizing = new Set<Promise<void>>();
  /** Turns that have ended whose words are not known yet (the host has not been told). */
  private unrecognized = 0;

  constructor(
    private readonly config: CallerTurnConfig,
    private readonly host: CallerTurnHost,
  ) {}

  /** Whether the caller is in a turn (speaking, or pausing in it). */
  get inProgress(): boolean {
    return this.utterance !== undefined;
  }

  /** Whether the caller is in a turn, or one has ended and its words are still being recognized: the agent owes them an answer. */
  get busy(): boolean {
    return this.utterance !== undefined || this.unrecognized > 0;
  }

  /**
   * Opens the call's recognizer with `open` (given the call's signal): true once it is ready,
   * false when the call ended meanwhile (it is given straight back, and an opening aborted by
   * the call's end is no failure). Rejects when it cannot be opened.
   */
  async openRecognizer(open: (signal: AbortSignal) => Promise<AsrSession>): Promise<boolean> {
    this.asrReady = open(this.config.signal);
    const asr = await this.asrReady.catch((err: unknown) => {
      if (this.host.isEnding()) return undefined;
      throw err;
    });
    if (this.host.isEnding() || !asr) {
      await asr?.close();
      return false;
    }
    this.asr = asr;
    return true;
  }

  /** Releases the recognizer (the call has ended). */
  closeRecognizer(): Promise<void> | undefined {
    return this.asr?.close();
  }

  /** One caller frame with the turn detector's signal: true when the part being spoken took it. */
  hear({ frame, signal, endMs }: CallerFrame): boolean {
    if (signal?.type === "turn_start") this.begin(signal.atMs);
    else if (signal?.type === "resume" && this.utterance) this.openPart(this.utterance);
    if (signal?.type === "turn_start" || signal?.type === "resume") this.host.spoke();
    const utterance = this.utterance;
    const audio = utterance?.audio;
    if (utterance && audio) {
      audio.push(frame);
      if (this.config.turnDetector.lastSpeechEndMs === endMs) {
        utterance.lastVoicedAt = this.config.clock.now();
        this.host.voiced(utterance.lastVoicedAt);
      }
      this.host.heard(utterance.partial);
    }
    if (signal?.type === "pause" && utterance) this.pausePart(utterance, signal.pause);
    else if (signal?.type === "turn_end" && utterance) this.end(utterance);
    return audio !== undefined;
  }

  /**
   * The call is ending: the turn in progress ends now, and its words (and those of turns still
   * being recognized) are waited for `waitMs` at most; they reach the host through `ended`.
   */
  async lastWords(waitMs: number): Promise<void> {
    if (this.utterance) this.end(this.utterance);
    if (this.recognizing.size === 0) return;
    const { clock } = this.config;
    let timer: TimerHandle | undefined;
    const deadline = new Promise<void>((resolve) => (timer = clock.setTimeout(resolve, waitMs)));
    await Promise.race([Promise.all(this.recognizing), deadline]);
    clock.clearTimeout(timer!);
  }

  /** The call has ended: a part still open gets no more audio. */
  close(): void {
    this.utterance?.audio?.end();
  }

  private begin(atMs: number): void {
    const utterance: Utterance = {
      audio: undefined,
      parts: [],
      partial: "",
      startMs: atMs,
      lastVoicedAt: this.config.clock.now(),
      finalAt: null,
      // Speech over the agent (a backchannel, a barge-in) is no answer to a question not yet heard out.
      expected: this.host.isAgentSpeaking() ? undefined : this.host.expectedSpeech(),
    };
    this.utterance = utterance;
    this.openPart(utterance);
  }

  /** Recognizes the caller's speech from now (and the pre-roll before it) as the next part of `utterance`. */
  private openPart(utterance: Utterance): void {
    const audio = new AsyncQueue<AudioFrame>();
    for (const frame of this.config.input.takePreRoll()) audio.push(frame);
    utterance.audio = audio;
    const before = utterance.parts.slice();
    const part = this.recognise(utterance, audio, before);
    // A part still open when the call ends is abandoned with the recognizer's abort.
    part.catch(() => undefined);
    utterance.parts.push(part);
  }

  /**
   * The caller paused: the part is recognized to its end now ("finish now": its audio ends), and
   * the turn's words so far are judged, unless the caller has spoken again by then.
   */
  private pausePart(utterance: Utterance, pause: number): void {
    utterance.audio?.end();
    utterance.audio = undefined;
    const parts = utterance.parts.length;
    Promise.all(utterance.parts).then(
      (texts) => {
        if (this.host.isEnding() || this.utterance !== utterance || utterance.parts.length !== parts) return;
        const words = joinParts(texts);
        const completeness = this.judgeWords(words);
        if (this.config.turnDetector.judge(pause, completeness, this.config.input.inputMs)?.type === "turn_end") this.end(utterance);
        else if (completeness !== "incomplete") this.host.mayEnd(utterance, words);
      },
      // A failed part fails the turn when it ends (see `end`).
      () => undefined,
    );
  }

  /** One part's final text; its partials (after the parts `before`) are the utterance's partial meanwhile. */
  private async recognise(utterance: Utterance, audio: AsyncQueue<AudioFrame>, before: Array<Promise<string>>): Promise<string> {
    const asr = this.asr ?? (await this.asrReady);
    if (!asr || this.host.isEnding()) return "";
    const earlier = joinParts(await Promise.all(before));
    let final = "";
    for await (const result of asr.transcribe(audio, this.config.signal, utterance.expected)) {
      if (result.type === "partial") {
        utterance.partial = joinParts([earlier, result.text]);
        this.host.report({ type: "partial_transcript", text: utterance.partial });
        this.host.heard(utterance.partial);
      } else {
        final = result.text.trim();
      }
    }
    utterance.partial = joinParts([earlier, final]);
    utterance.finalAt = this.config.clock.now();
    return final;
  }

  /**
   * Whether the caller's words so far make a whole turn. No words (a noise) and a backchannel
   * over the agent end it at once: the agent, paused for them, goes on without a long wait.
   */
  private judgeWords(words: string): TurnCompleteness {
    if (words === "" || (this.host.isAgentSpeaking() && isBackchannel(words))) return "complete";
    return this.host.judgeTurn(words) ?? transcriptCompleteness(words);
  }

  private end(utterance: Utterance): void {
    this.utterance = undefined;
    const endpointAt = this.config.clock.now();
    utterance.audio?.end();
    this.unrecognized += 1;
    const recognized = Promise.all(utterance.parts)
      // Counted off before the host hears of the words (`busy` is false while it answers them).
      .finally(() => (this.unrecognized -= 1))
      .then(
        (texts) => this.host.ended(utterance, joinParts(texts), endpointAt),
        (err: unknown) => this.host.failed(utterance, endpointAt, err),
      )
      .catch((err: unknown) => this.host.broken(err));
    this.recognizing.add(recognized);
    void recognized.finally(() => this.recognizing.delete(recognized));
  }
}

/** The recognized parts of a turn as one text. */
function joinParts(texts: readonly string[]): string {
  return texts.filter(Boolean).join(" ");
}
