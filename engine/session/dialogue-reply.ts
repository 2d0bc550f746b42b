import type { Clock } from "../audio/clock.js";
import type { CallAction, CallEndReason } from "../call-events.js";
import type { DialogueEvent } from "../providers/llm/dialogue-provider.js";
import { AsyncQueue } from "../stream/async-queue.js";
import { SentenceSplitter } from "../text/sentence-splitter.js";
import type { AgentTurn } from "./agent-turn.js";

/**
 * The dialogue's reply for `turn` as sentences to speak: `ask` starts the dialogue's turn (with
 * the turn's abort signal). Its decisions are noted on the turn (`after`: transfer, hand-off,
 * end the call) and its actions go into `actions` (an early reply's wait in its `held.actions` until it
 * is the answer). `turn.hold(line)` says `line` at once, ahead of the rest (a tool is taking long).
 */
export function dialogueReply(turn: AgentTurn, ask: (signal: AbortSignal) => AsyncIterable<DialogueEvent>, clock: Clock, actions: CallAction[]): AsyncIterable<string> {
  const out = new AsyncQueue<string>();
  const splitter = new SentenceSplitter();
  turn.hold = (line) => {
    for (const sentence of splitter.flush()) out.push(sentence);
    out.push(line);
  };
  const pump = async () => {
    const events = ask(turn.abort.signal);
    for await (const event of events) {
      if (turn.abort.signal.aborted) return;
      if (event.type === "text") {
        turn.metrics.firstTokenAt ??= clock.now();
        for (const sentence of splitter.push(event.text)) out.push(sentence);
        continue;
      }
      (turn.held?.actions ?? actions).push(actionOf(event));
      if (event.type === "transfer") turn.after = "transfer";
      else if (event.type === "handoff") turn.after = { handoff: event.handoff };
      else if (event.type === "end_call") turn.after = { endCall: callEndReasonOf(event.reason) };
    }
    for (const sentence of splitter.flush()) out.push(sentence);
  };
  pump().then(
    () => out.end(),
    (err: unknown) => out.fail(err),
  );
  return out;
}

/** How a dialogue event other than text is kept among the call's actions. */
function actionOf(event: Exclude<DialogueEvent, { type: "text" }>): CallAction {
  if (event.type === "transfer") return { type: "transfer" };
  if (event.type === "handoff") return { type: "handoff", agentId: event.handoff.agent.id };
  return event;
}

/** Dialogue end reasons that the call keeps as its own; the dialogue ending the call for any other reason is `agent_ended`. */
const DIALOGUE_END_REASONS: ReadonlySet<string> = new Set<CallEndReason>(["voicemail", "do_not_call"]);

function callEndReasonOf(dialogueReason: string): CallEndReason {
  return DIALOGUE_END_REASONS.has(dialogueReason) ? (dialogueReason as CallEndReason) : "agent_ended";
}
