import { EventEmitter } from "eventemitter3";
import { FRAME_MS, type AudioFrame } from "./audio/audio-frame.js";
import { systemClock, type Clock, type TimerHandle } from "./audio/clock.js";
import type { CallAction, CallEndReason, CallEvent, CallState, TranscriptSegment } from "./call-events.js";
import type { DialogueSession } from "./providers/llm/dialogue-provider.js";
import { AgentPlayout } from "./playout/agent-playout.js";
import type { HeardText } from "./playout/heard-text.js";
import { streamOf } from "./stream/stream-of.js";
import { greetingSentences } from "./text/greeting.js";
import { SentenceSplitter } from "./text/sentence-splitter.js";
import { AgentSpeech } from "./session/agent-speech.js";
import type { CallSessionEvents, CallSessionOptions, CallSummary } from "./session/call-session-options.js";
import { dialogueReply } from "./session/dialogue-reply.js";
import { newAgentTurn, type AgentTurn, type CallerTimings } from "./session/agent-turn.js";
import { CallerInput } from "./session/caller-input.js";
import { CallerTurn, LAST_WORDS_WAIT_MS, type Utterance } from "./session/caller-turn.js";
import { EarlyReply } from "./session/early-reply.js";
import { KeypadEntry, type KeyEntry } from "./session/keypad-entry.js";
import { CallRecord } from "./session/call-record.js";
import { RecordingTap } from "./session/recording-tap.js";
import { SILENCE_GOODBYE_MAX_MS, SILENCE_TIMEOUT_LINE, SilenceWatch } from "./session/silence-watch.js";
import { ToolRunner } from "./session/tool-runner.js";
import { ASR_FALLBACK_LINE, REPLY_FALLBACK_LINE, TurnFailures } from "./session/turn-failures.js";
import type { MediaTransport } from "./transports/transport.js";
import { matchEndCallPhrase } from "./turn/end-call-phrases.js";
import type { TurnDetector } from "./turn/turn-detector.js";
import { turnDetectorFor } from "./turn/turn-detectors.js";
import { SUPERVISOR_GUIDANCE_KEPT, supervisorText } from "./supervisor-text.js";
import { NO_TOOLS, type Handoff, type ToolExecutor } from "./tools.js";
import type { AgentSettings } from "./types.js";

export type { CallProviders, CallSessionOptions, CallSummary } from "./session/call-session-options.js";
export { LAST_WORDS_WAIT_MS } from "./session/caller-turn.js";
export { ASR_FALLBACK_LINE, REPLY_FALLBACK_LINE } from "./session/turn-failures.js";
export { SILENCE_TIMEOUT_LINE } from "./session/silence-watch.js";


/**
 * One live call end to end: caller audio -> VAD -> endpointing -> ASR -> dialogue -> TTS ->
 * paced agent audio, with barge-in, recording, transcript and per-turn metrics. Nothing runs
 * until `start()`; `stop()` (or the far end hanging up, an end-call phrase, the dialogue's
 * decision, `max_duration`) ends it and resolves `ended`.
 *
 * The session conducts the turns (who speaks, barge-in, what a failure or the end cuts); its
 * jobs are played by collaborators in engine/session/: caller input, caller turn (recognition),
 * keypad entry, tool runner, agent speech, early reply, turn failures (the rules), silence
 * watch, call record, recording tap.
 */
export class CallSession extends EventEmitter<CallSessionEvents> {
  private readonly clock: Clock;
  private readonly playout: AgentPlayout<AgentTurn>;
  private readonly transport: MediaTransport;
  /** The agent on the line: the call's own, or the one it was last handed off to. */
  private agent: AgentSettings;
  private readonly turnDetector: TurnDetector;
  // The session's collaborators (engine/session/): each owns its state and reports back through the callbacks given here.
  private readonly recording: RecordingTap;
  private readonly callerInput: CallerInput;
  private readonly callerTurn: CallerTurn;
  private readonly keypad: KeypadEntry;
  private readonly speech: AgentSpeech;
  private readonly failures: TurnFailures;
  private readonly silenceWatch: SilenceWatch;
  /** The reply being prepared for the caller's words so far (see `replyEarly`). */
  private readonly early: EarlyReply<Utterance>;
  /** The transcript, the turns' metrics and the agent's actions. */
  private readonly record = new CallRecord((event) => this.emitEvent(event));
  private dialogue: DialogueSession | undefined;
  private startedAt = 0;
  /** The turn whose reply the dialogue is producing (its tools may need a hold line). */
  private replying: AgentTurn | undefined;
  private interrupted: { turn: AgentTurn; heard: HeardText } | undefined;
  private turnCounter = 0;
  private maxDurationTimer: TimerHandle | undefined;
  /** The hard stop after a closing line (see `hangUpWith`). */
  private closingTimer: TimerHandle | undefined;
  /** The call is saying its closing line: the caller can no longer interrupt or take a turn. */
  private closing = false;
  /** Lines a supervisor had the agent say, waiting for their turn (see `say`). */
  private readonly supervisorLines: string[] = [];
  /** A supervisor talks to the caller in the agent's place (see `takeOver`). */
  private takenOver = false;
  /** What the caller said while a supervisor had the call: the dialogue is told at `handBack`. */
  private readonly heardWhileTakenOver: string[] = [];
  /** The reply to the caller's last turn, waiting for a supervisor's lines to be said first (see `answer`). */
  private deferredReply: { input: ReplyInput } | undefined;
  /** A supervisor's guidance so far, newest last: given again to the dialogue of an agent the call is handed to. */
  private readonly guidance: string[] = [];
  /** Aborted when the call ends: stops recognition and anything else still running. */
  private readonly lifetime = new AbortController();
  private endedResolve!: (summary: CallSummary) => void;
  private ending: Promise<CallSummary> | undefined;
  /** Resolves once the call has ended and everything is released. */
  readonly ended: Promise<CallSummary>;

  constructor(private readonly options: CallSessionOptions) {
    super();
    this.clock = options.clock ?? systemClock;
    this.playout = new AgentPlayout<AgentTurn>(options.transport, this.clock);
    this.transport = options.transport;
    this.agent = options.agent;
    this.turnDetector = options.turnDetector ?? turnDetectorFor(options.agent);
    this.recording = new RecordingTap((event) => this.emitEvent(event));
    this.failures = new TurnFailures(options.providers, { report: (event) => this.emitEvent(event), fail: (err) => this.fail(err) });
    this.speech = new AgentSpeech(
      { clock: this.clock, playout: this.playout, transport: options.transport, voice: { tts: options.providers.tts, voiceId: options.agent.voiceId }, fallbackTts: options.providers.fallbackTts },
      {
        started: () => this.setState("speaking"),
        synthesized: (turn) => this.onTurnSynthesized(turn),
        failed: (turn, err) => this.onTurnFailed(turn, err),
      },
    );
    this.callerInput = new CallerInput(
      this.clock,
      this.turnDetector,
      {
        isEnding: () => this.ending !== undefined,
        overrun: () => void this.stop("audio_overrun"),
        report: (event) => this.emitEvent(event),
        record: (frame, atMs) => this.recording.record("caller", frame, atMs),
        heard: (frame) => this.callerTurn.hear(frame),
        failed: (err) => this.fail(err),
      },
      options.preRollMs,
    );
    this.callerTurn = new CallerTurn(
      { clock: this.clock, turnDetector: this.turnDetector, input: this.callerInput, signal: this.lifetime.signal },
      {
        isEnding: () => this.ending !== undefined,
        report: (event) => this.emitEvent(event),
        spoke: () => this.onCallerSpoke(),
        voiced: (atMs) => this.silenceWatch.heard(atMs),
        heard: (words) => this.bargeIn(words),
        isAgentSpeaking: () => this.speaking !== undefined,
        judgeTurn: (words) => this.dialogue?.judgeTurn?.(words),
        expectedSpeech: () => this.dialogue?.expectedSpeech?.() ?? undefined,
        mayEnd: (utterance, words) => this.replyEarly(utterance, words),
        ended: (utterance, text, endpointAt) => this.onCallerTurn(utterance, text, endpointAt),
        failed: (utterance, endpointAt, err) => this.onUtteranceFailed(utterance, endpointAt, err),
        broken: (err) => this.fail(err),
      },
    );
    this.early = new EarlyReply(this.playout, (event) => this.emitEvent(event));
    this.keypad = new KeypadEntry(this.clock, {
      isEnding: () => this.ending !== undefined,
      isClosing: () => this.closing,
      report: (event) => this.emitEvent(event),
      keyPressed: (atMs) => this.onKeyPressed(atMs),
      entered: (entry) => this.onKeys(entry),
    });
    this.silenceWatch = new SilenceWatch(this.clock, options.silenceTimeoutMs ?? 0, {
      isOver: () => this.ending !== undefined || this.closing,
      isBusy: () => this.speaking !== undefined || this.callerTurn.inProgress,
      silent: () => void this.hangUpWith(SILENCE_TIMEOUT_LINE, "silence_timeout", SILENCE_GOODBYE_MAX_MS),
    });
    this.ended = new Promise((resolve) => (this.endedResolve = resolve));
  }

  /** Opens the providers, speaks the greeting and starts listening. */
  async start(): Promise<void> {
    const { providers, transport } = this.options;
    this.startedAt = this.clock.now();
    // Before anything is awaited: a hang-up during set-up ends the call, and a connection that
    // closed before the session started (its hang-up heard by no one) ends it at once.
    transport.on("hangup", (reason) => void this.stop(hangupEndReason(reason)));
    if (transport.closed) return void this.stop("caller_hangup");
    this.emitEvent({ type: "state", state: "connecting" });
    this.callerInput.open(providers.vad.createVad(transport.inputSampleRate), this.startedAt);
    this.dialogue = providers.dialogue.open({ agent: this.agent, context: this.options.context, tools: this.toolRunner(this.options.tools ?? NO_TOOLS) });
    for (const text of this.guidance) this.dialogue.guide?.(text);
    if (this.options.recordingPath) {
      await this.recording.open(this.options.recordingPath);
      if (this.ending) return;
    }
    transport.on("audio", (frame) => this.callerInput.push(frame));
    transport.on("dtmf", (digit) => this.keypad.press(digit));
    this.playout.on("frame", (frame, atMs, turn) => this.onFrameSent(frame, atMs, turn));
    this.playout.on("idle", (turn) => {
      if (turn?.complete && turn.playedFrames === turn.queuedFrames) this.onTurnPlayed(turn);
    });
    this.maxDurationTimer = this.clock.setTimeout(() => void this.stop("max_duration"), this.options.maxDurationSec * 1000);
    this.silenceWatch.start(this.startedAt);

    // The greeting goes out before the recognizer is ready: the caller hears it at once.
    const greeting = greetingSentences(this.agent, this.options.context);
    if (greeting.length > 0) this.speech.speak(this.newTurn(null, "fixed"), streamOf(...greeting), providers.greetingTts);
    // A recognizer that cannot be opened now ends the call (start() rejects), whatever the
    // error: a call that cannot listen has not begun, and none free (capacity) is meant to
    // refuse the call at once. Failures later in the call are recovered utterance by utterance.
    const listening = await this.callerTurn.openRecognizer((signal) => providers.asr.open({ language: this.agent.language, sampleRate: transport.inputSampleRate, signal }));
    if (listening && !this.speaking) this.next();
  }

  /**
   * A supervisor has the agent say `text` as its next turn, in its voice: at once when the
   * agent is listening; after the turn it is saying or preparing (never cut); when the caller
   * is in a turn (or their words are still being recognized), once it ends, and before the
   * dialogue's reply to it (which then follows the line, knowing it was said). Several wait in
   * order. The transcript and the dialogue keep what the caller heard of it, as the agent's
   * words. Throws a RangeError for an empty text or one over 1000 characters; a no-op once the
   * call is ending.
   */
  say(text: string): void {
    const line = supervisorText(text);
    if (this.ending || this.closing) return;
    this.supervisorLines.push(line);
    // A reply prepared for the caller's words so far would come before the line: it is dropped.
    if (this.callerTurn.busy) this.early.drop();
    if (this.dialogue && !this.speaking && !this.interrupted && !this.callerTurn.busy && !this.takenOver) this.sayLine();
  }

  /**
   * A supervisor takes the call over: the agent stops at once (what was heard of its turn is
   * kept), prepares no reply and answers nothing until `handBack`; the caller's words are still
   * recognized and go in the transcript. The supervisor's own audio reaches the caller through
   * the control plane, not the engine. Silence does not end the call meanwhile (the supervisor's
   * voice is not heard here). A no-op once the call is ending or while taken over.
   */
  takeOver(): void {
    if (this.ending || this.closing || this.takenOver) return;
    this.takenOver = true;
    this.early.drop();
    if (this.speaking) this.interrupt();
    this.interrupted = undefined;
    this.silenceWatch.stop();
    this.emitEvent({ type: "supervisor", action: "takeover", text: "" });
    this.setState("listening");
  }

  /**
   * The supervisor gives the call back: the dialogue is told what the caller said meanwhile (as
   * guidance: it did not hear the supervisor), lines a supervisor asked it to say are said, then
   * it answers the caller's next turn as before.
   */
  handBack(): void {
    if (!this.takenOver || this.ending || this.closing) return;
    this.takenOver = false;
    const heard = this.heardWhileTakenOver.splice(0);
    if (heard.length > 0) this.dialogue?.guide?.(`A supervisor spoke with the caller in your place. Meanwhile the caller said: "${heard.join(" ")}". Carry on from there.`);
    this.silenceWatch.start(this.clock.now());
    this.emitEvent({ type: "supervisor", action: "handback", text: "" });
    if (!this.speaking) this.next();
  }

  /**
   * A supervisor's guidance for the agent's next replies, never spoken: the dialogue keeps it
   * for the rest of the call (also across a hand-off; a chat model follows it, the rules
   * dialogue ignores it). Same checks as `say`; a no-op once the call is ending.
   */
  whisper(text: string): void {
    const guidance = supervisorText(text);
    if (this.ending || this.closing) return;
    this.guidance.push(guidance);
    if (this.guidance.length > SUPERVISOR_GUIDANCE_KEPT) this.guidance.shift();
    this.dialogue?.guide?.(guidance);
    this.emitEvent({ type: "supervisor", action: "whisper", text: guidance });
  }

  /**
   * Ends the call politely: whatever the agent is saying is cut, `line` is said (the caller can
   * no longer interrupt or take a turn), then the call ends with `reason`; at the latest after
   * `withinMs`, said or not. For endings the caller should hear explained (silence, credit).
   */
  hangUpWith(line: string, reason: CallEndReason, withinMs: number): Promise<CallSummary> {
    if (this.ending || this.closing) return this.ended;
    this.closing = true;
    this.early.drop();
    this.supervisorLines.length = 0;
    this.deferredReply = undefined;
    this.closingTimer = this.clock.setTimeout(() => void this.stop(reason), withinMs);
    const turn = this.speaking;
    if (turn) {
      this.silence(turn);
      const heard = this.playout.heard(turn);
      if (turn.kind === "reply") this.dialogue?.truncateLastReply(heard.text);
      this.finishTurn(turn, heard.text);
    }
    this.interrupted = undefined;
    const goodbye = this.newTurn(null, "fixed");
    goodbye.after = { endCall: reason };
    this.speech.speak(goodbye, streamOf(line));
    return this.ended;
  }

  /** The transcript so far (a copy), in the order the segments started: what a crash would otherwise lose. */
  transcriptSoFar(): TranscriptSegment[] {
    return this.record.transcriptSoFar();
  }

  /** Ends the call (idempotent); resolves with what it produced. */
  stop(reason: CallEndReason = "stopped"): Promise<CallSummary> {
    this.ending ??= this.finish(reason);
    return this.ending;
  }

  // ---- caller side -------------------------------------------------------------------------

  /** The caller starts or resumes speaking: a reply prepared for their words so far is not the answer, and the agent waits to know what it is. */
  private onCallerSpoke(): void {
    this.early.drop();
    if (this.speaking && !this.interrupted && !this.closing) this.playout.pause();
  }

  /** Caller speech over the agent, recognized so far as `words`: the agent stops when it interrupts. */
  private bargeIn(words: string): void {
    if (this.speaking && !this.interrupted && !this.closing && this.turnDetector.interrupts(words)) this.interrupt();
  }

  /**
   * The caller paused on words that may end their turn (complete or unknown): the turn waits a
   * little longer (see AdaptiveTurnDetector), and meanwhile the reply to those words is
   * prepared, unheard: the dialogue's text and the first audio. It is said at once if the turn
   * ends with those words; dropped, with the conversation put back, if the caller goes on.
   */
  private replyEarly(utterance: Utterance, words: string): void {
    if (!this.dialogue?.checkpoint || !words || this.early.turn || this.speaking || this.interrupted || this.closing || this.ending || this.supervisorLines.length > 0 || this.takenOver) return;
    const restore = this.dialogue.checkpoint();
    const turn = this.newTurn(null, "reply");
    this.early.hold(turn, utterance, words, restore);
    this.speech.speak(turn, this.reply(turn, { text: words }));
  }

  /** The turn ended with the words the early reply answers: it is said now. */
  private sayEarly({ turn, actions }: { turn: AgentTurn; actions: CallAction[] }, utterance: Utterance, text: string, caller: CallerTimings): void {
    this.record.said("user", text, utterance.startMs / 1000);
    Object.assign(turn.metrics, caller);
    this.record.actions.push(...actions);
    this.emitEvent({ type: "early_reply", used: true });
    this.setState("thinking");
    this.playout.resume();
    if (this.playout.playing) this.setState("speaking");
    else if (turn.complete && turn.queuedFrames === turn.playedFrames) this.onTurnPlayed(turn);
  }

  /** The recognizer failed the caller's words: the agent asks again (see `TurnFailures.survives`). */
  private onUtteranceFailed(utterance: Utterance, endpointAt: number, err: unknown): void {
    if (this.ending || this.closing) return;
    this.early.drop();
    if (this.speaking && !this.interrupted) {
      // Said over the agent, who goes on: no turn was lost.
      this.playout.resume();
      return this.failures.overAgent(err);
    }
    if (!this.failures.survives(err)) return;
    this.interrupted = undefined;
    this.speech.speak(this.newTurn({ endOfSpeechAt: utterance.lastVoicedAt, endpointAt, asrFinalAt: null }, "fallback"), streamOf(ASR_FALLBACK_LINE));
  }

  /** A key stops the agent at once (a key press is never a backchannel), and the entry is awaited. */
  private onKeyPressed(atMs: number): void {
    this.early.drop();
    this.silenceWatch.heard(atMs);
    if (this.speaking) {
      this.interrupt();
      this.interrupted = undefined;
    }
  }

  /** The keys the caller entered are their turn. */
  private onKeys({ keys, startedAt, lastKeyAt }: KeyEntry): void {
    if (this.ending || this.closing) return;
    if (this.speaking) this.interrupt();
    this.interrupted = undefined;
    this.record.said("user", `[pressed ${keys}]`, (startedAt - this.startedAt) / 1000);
    if (this.takenOver) return void this.heardWhileTakenOver.push(`[pressed ${keys}]`);
    const now = this.clock.now();
    this.answer({ endOfSpeechAt: lastKeyAt, endpointAt: now, asrFinalAt: now }, { keys });
  }

  private onCallerTurn(utterance: Utterance, text: string, endpointAt: number): void {
    if (this.ending || this.closing) {
      // Said over the closing line, or as the call ended: kept in the transcript, not answered.
      if (text && !this.record.transcriptClosed) this.record.said("user", text, utterance.startMs / 1000);
      return;
    }
    // A turn judged complete at a pause had its final before its end.
    const asrFinalAt = utterance.finalAt ?? this.clock.now();
    const caller = { endOfSpeechAt: utterance.lastVoicedAt, endpointAt, asrFinalAt };
    const early = matchEndCallPhrase(text, this.agent.endCallPhrases) ? undefined : this.early.take(utterance, text);
    if (early) return this.sayEarly(early, utterance, text, caller);
    this.early.drop();
    const interrupted = this.interrupted;
    if (!text || (this.turnDetector.interruptsAfterFinal(text) === false && (this.speaking || interrupted))) {
      // Noise or a backchannel: the agent goes on where it paused (or says the rest of what was cut off).
      if (interrupted) this.resume(interrupted);
      else this.playout.resume();
      // Silent after all: a supervisor's line that waited for the caller goes now.
      if (!this.speaking) this.next();
      return;
    }
    if (this.speaking && !interrupted) this.interrupt();
    this.interrupted = undefined;
    this.record.said("user", text, utterance.startMs / 1000);
    if (matchEndCallPhrase(text, this.agent.endCallPhrases)) {
      void this.stop("end_call_phrase");
      return;
    }
    // The supervisor answers the caller; the agent is told at hand-back.
    if (this.takenOver) return void this.heardWhileTakenOver.push(text);
    this.answer(caller, { text });
  }

  // ---- agent side --------------------------------------------------------------------------

  private newTurn(caller: CallerTimings | null, kind: AgentTurn["kind"]): AgentTurn {
    return newAgentTurn(++this.turnCounter, caller, kind);
  }

  /**
   * The dialogue answers the caller's words or keys, unless a supervisor's lines wait: they are
   * said first and the reply follows them (see `next`), so the dialogue knows they were said.
   * Words whose reply waited for a line the caller then cut short are answered with these.
   */
  private answer(caller: CallerTimings, input: ReplyInput): void {
    const waiting = this.deferredReply?.input;
    this.deferredReply = undefined;
    if (waiting && "text" in waiting && "text" in input) input = { text: `${waiting.text} ${input.text}` };
    if (this.supervisorLines.length > 0) {
      this.deferredReply = { input };
      return this.sayLine();
    }
    const turn = this.newTurn(caller, "reply");
    this.setState("thinking");
    this.speech.speak(turn, this.reply(turn, input));
  }

  /** The dialogue's reply to the caller's words or keys, as sentences (see `dialogueReply`). */
  private reply(turn: AgentTurn, input: ReplyInput): AsyncIterable<string> {
    this.replying = turn;
    const dialogue = this.dialogue!;
    return dialogueReply(turn, (signal) => ("keys" in input ? dialogue.respondToKeys(input.keys, signal) : dialogue.respond(input.text, signal)), this.clock, this.record.actions);
  }

  /** The control plane's tools as the dialogue uses them: bounded, with a hold line, each run reported. */
  private toolRunner(tools: ToolExecutor): ToolRunner {
    return new ToolRunner(tools, this.clock, {
      replying: () => this.replying,
      ran: (call) => {
        this.record.actions.push({ type: "tool_call", ...call });
        this.emitEvent({ type: "tool_call", ...call });
      },
    });
  }

  /** The turn the agent is saying (or pausing in, or preparing audio for); undefined when it is silent. */
  private get speaking(): AgentTurn | undefined {
    return this.playout.turn;
  }

  /** All of `turn`'s audio is queued. */
  private onTurnSynthesized(turn: AgentTurn): void {
    this.failures.synthesized(turn);
    // Everything already played (or nothing to play): the FrameClock will not go idle again.
    if (this.speaking === turn && !turn.held && turn.queuedFrames === turn.playedFrames && !this.playout.playing) this.onTurnPlayed(turn);
  }

  /**
   * The dialogue or the TTS failed `turn` (after the provider's own retries). The turn is cut
   * where it stands, as a barge-in cuts it, and the fallback voice takes over: a reply gets the
   * apology, fixed text has its unheard rest said. Then the agent listens again.
   */
  private onTurnFailed(turn: AgentTurn, err: unknown): void {
    if (this.ending) return;
    // An early reply that failed is dropped: the turn, when it ends, is answered as usual.
    if (this.early.turn === turn) return this.early.drop();
    const failure = this.failures.replyFailed(turn, err);
    if (failure === "ended") return;
    if (this.speaking === turn) this.silence(turn);
    else turn.abort.abort();
    const heard = this.playout.heard(turn);
    this.finishTurn(turn, heard.text);
    if (failure === "say_rest") {
      // The text is known (fixed text, or a reply the dialogue finished before the TTS failed):
      // the fallback voice says its unheard rest, and what the reply decided (transfer, hang up)
      // still happens after it. The dialogue learns the rest was said once it is heard.
      if (turn.kind === "reply") this.dialogue?.truncateLastReply(heard.text);
      if (!heard.remaining) return this.carryOut(turn);
      this.resume({ turn, heard }, "fallback");
      if (!this.speaking) this.setState("listening");
    } else {
      if (!turn.supervisor) this.dialogue?.truncateLastReply(heard.text);
      this.speech.speak(this.newTurn(turn.metrics, "fallback"), streamOf(REPLY_FALLBACK_LINE));
    }
  }

  /** One paced agent frame has gone to the caller: into the recording and the turn's metrics. */
  private onFrameSent(frame: AudioFrame, atMs: number, turn: AgentTurn | undefined): void {
    this.recording.record("agent", frame, atMs - this.startedAt);
    if (!turn) return;
    this.silenceWatch.heard(this.clock.now());
    if (turn.metrics.firstFrameSentAt === null) {
      const now = this.clock.now();
      turn.metrics.firstFrameSentAt = now;
      turn.metrics.voiceToVoiceMs = Math.round(now - (turn.metrics.endOfSpeechAt ?? this.startedAt));
    }
  }

  /** The reply was heard in full. */
  private onTurnPlayed(turn: AgentTurn): void {
    if (this.speaking !== turn) return;
    this.playout.end(turn);
    this.transport.sendMark(`turn-${turn.id}`);
    this.finishTurn(turn, turn.text);
    // The whole reply has now been heard after all: the dialogue must know (a question it asked counts).
    if (turn.resumesAfter !== undefined && !turn.supervisor) this.dialogue?.truncateLastReply(`${turn.resumesAfter} ${turn.text}`.trim());
    this.carryOut(turn);
  }

  /** What a turn heard in full leads to: the transfer or hang-up it decided, else listening. */
  private carryOut(turn: AgentTurn): void {
    if (turn.after === "transfer") {
      this.emitEvent({ type: "transfer", number: this.agent.transferNumber });
      void this.stop("transferred");
    } else if (typeof turn.after === "object" && "handoff" in turn.after) {
      this.handOff(turn.after.handoff);
    } else if (typeof turn.after === "object") {
      void this.stop(turn.after.endCall);
    } else if (matchEndCallPhrase(turn.text, this.agent.endCallPhrases)) {
      void this.stop("end_call_phrase");
    } else {
      this.next();
    }
  }

  /**
   * The agent has said what it had to: a supervisor's next line (unless the caller is in a turn:
   * it waits for its end), else the reply that waited for the lines, else it listens.
   */
  private next(): void {
    if (this.takenOver) return this.setState("listening");
    if (this.supervisorLines.length > 0 && !this.callerTurn.busy) return this.sayLine();
    const deferred = this.deferredReply;
    this.deferredReply = undefined;
    if (!deferred) return this.setState("listening");
    // Answering no caller speech of its own: its wait was the supervisor's line, not the pipeline (latency leaves it out).
    const turn = this.newTurn(null, "reply");
    this.setState("thinking");
    this.speech.speak(turn, this.reply(turn, deferred.input));
  }

  /** The agent says the supervisor's next line now (announced as it begins), sentence by sentence as a reply is. */
  private sayLine(): void {
    const line = this.supervisorLines.shift()!;
    const turn = this.newTurn(null, "fixed");
    turn.supervisor = true;
    this.emitEvent({ type: "supervisor", action: "say", text: line });
    const splitter = new SentenceSplitter();
    this.speech.speak(turn, streamOf(...splitter.push(line), ...splitter.flush()));
  }

  /**
   * Another agent takes the call over, on the same line: its voice from the next word, a new
   * dialogue with its prompt and tools that knows the conversation so far, and its agent id on
   * what it says in the transcript. It opens with its first message when it has one, else it
   * listens. The recognizer and the turn-taking stay the call's (they belong to the line).
   */
  private handOff({ agent, tools }: Handoff): void {
    const from = this.agent;
    this.agent = agent;
    this.speech.changeVoice(agent.voiceId);
    this.record.speaker = agent.id === this.options.agent.id ? undefined : agent.id;
    const executor = this.options.tools ?? NO_TOOLS;
    const offered: ToolExecutor = { definitions: tools, execute: (name, args, signal) => executor.execute(name, args, signal) };
    this.dialogue = this.options.providers.dialogue.open({ agent, context: this.options.context, tools: this.toolRunner(offered), history: this.record.transcriptSoFar() });
    // The supervisor's guidance holds for the rest of the call, whichever agent is on it.
    for (const text of this.guidance) this.dialogue.guide?.(text);
    this.emitEvent({ type: "handoff", fromAgentId: from.id, toAgentId: agent.id, toAgentName: agent.name });
    const greeting = greetingSentences(agent, this.options.context);
    if (greeting.length > 0) this.speech.speak(this.newTurn(null, "fixed"), streamOf(...greeting));
    else this.next();
  }

  /** Barge-in: silence the agent at once, abandon the reply, keep what was heard. */
  private interrupt(): void {
    const turn = this.speaking;
    if (!turn) return;
    this.silence(turn);
    const playedMs = turn.playedFrames * FRAME_MS;
    const heard = this.playout.heard(turn);
    turn.metrics.interrupted = true;
    // A supervisor's line is no reply: the dialogue is given what was heard of it as it ends (`finishTurn`).
    if (!turn.supervisor) this.dialogue?.truncateLastReply(heard.text);
    this.emitEvent({ type: "interruption", turnId: turn.id, playedMs, heardText: heard.text });
    this.finishTurn(turn, heard.text);
    this.interrupted = { turn, heard };
    this.setState("listening");
  }

  /** Stops the turn being spoken at once: its requests are aborted and its queued audio dropped, here and at the far end. */
  private silence(turn: AgentTurn): void {
    turn.abort.abort();
    this.playout.stop();
  }

  /** A false interruption (noise, a backchannel), or a provider failure: say the rest of the cut-off reply. */
  private resume(interrupted: { turn: AgentTurn; heard: HeardText }, kind: "fixed" | "fallback" = "fixed"): void {
    this.interrupted = undefined;
    if (!interrupted.heard.remaining || this.speaking) return;
    const turn = this.newTurn(null, kind);
    turn.after = interrupted.turn.after;
    turn.supervisor = interrupted.turn.supervisor;
    turn.resumesAfter = interrupted.heard.before;
    this.speech.speak(turn, streamOf(interrupted.heard.remaining));
  }

  /** `turn` is over, `spokenText` of it heard (from its first frame sent, or from now). */
  private finishTurn(turn: AgentTurn, spokenText: string): void {
    this.record.turnEnded(turn.metrics, spokenText, ((turn.metrics.firstFrameSentAt ?? this.clock.now()) - this.startedAt) / 1000);
    if (turn.supervisor && spokenText) this.dialogue?.agentSaid?.(spokenText);
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  private async finish(reason: CallEndReason): Promise<CallSummary> {
    // The call lasted until now: waiting for the caller's last words is not billed.
    const durationMs = Math.max(0, this.clock.now() - this.startedAt);
    this.early.drop();
    this.supervisorLines.length = 0;
    this.deferredReply = undefined;
    for (const timer of [this.maxDurationTimer, this.closingTimer]) if (timer !== undefined) this.clock.clearTimeout(timer);
    this.silenceWatch.stop();
    this.keypad.stop();
    const turn = this.speaking;
    this.playout.stop({ farEnd: false });
    if (turn) {
      turn.abort.abort();
      this.finishTurn(turn, this.playout.heard(turn).text);
    }
    await this.keepLastWords();
    this.lifetime.abort();
    this.callerTurn.close();
    await this.callerInput.drained();
    await Promise.allSettled([this.callerTurn.closeRecognizer(), this.callerInput.close()]);
    const recording = await this.recording.close();
    this.setState("ended");
    const { transcript, turns, actions } = this.record.copy();
    const summary: CallSummary = { reason, durationMs, transcript, recording, turns, startedAt: this.startedAt, actions };
    this.emitEvent({ type: "ended", reason, durationMs, transcript: summary.transcript });
    this.transport.close(reason);
    this.endedResolve(summary);
    return summary;
  }

  /**
   * The caller's last words when the call ends go into the transcript, unanswered: keys pressed
   * within the entry gap, and speech still being recognized (the turn in progress ends now),
   * waited for LAST_WORDS_WAIT_MS at most.
   */
  private async keepLastWords(): Promise<void> {
    const keys = this.keypad.takePending();
    if (keys) this.record.said("user", `[pressed ${keys.keys}]`, (keys.startedAt - this.startedAt) / 1000);
    await this.callerTurn.lastWords(LAST_WORDS_WAIT_MS);
    this.record.close();
  }

  private fail(err: unknown): void {
    if (this.ending) return;
    this.emitEvent(this.failures.errorEvent(err, false));
    void this.stop("error");
  }

  private setState(state: CallState): void {
    this.emitEvent({ type: "state", state });
  }

  private emitEvent(event: CallEvent): void {
    this.transport.sendEvent(event);
    this.emit("event", event);
  }
}

/** Hang-ups a transport reports that are end reasons of their own; any other is the caller's (`caller_hangup`). */
const TRANSPORT_END_REASONS: ReadonlySet<string> = new Set<CallEndReason>(["client_not_reading"]);

function hangupEndReason(reason: string): CallEndReason {
  return TRANSPORT_END_REASONS.has(reason) ? (reason as CallEndReason) : "caller_hangup";
}

/** What the caller's turn gave the dialogue to answer: words, or keys pressed. */
type ReplyInput = { text: string } | { keys: string };
