import type { ToolExecutor } from "../../tools.js";
import type { ProviderChain } from "../provider-chain.js";
import type { CallerTurn, DialogueEvent, DialogueOpenOptions, DialogueProvider, DialogueSession } from "./dialogue-provider.js";

/**
 * Dialogue providers tried in order, per turn (see ProviderChain): when one fails a turn before
 * saying anything, the next answers that same turn and the call goes on. A provider that ran a
 * tool in the failed attempt is not replaced (the next would run it again: a second booking).
 *
 * Each provider keeps its own conversation: a turn answered by one is recorded in the others
 * (`recordTurn`), so whichever answers next knows what was said.
 */
export class FallbackDialogueProvider implements DialogueProvider {
  readonly name: string;

  constructor(private readonly chain: ProviderChain<DialogueProvider>) {
    this.name = chain.links[0]!.name;
  }

  open(options: DialogueOpenOptions): DialogueSession {
    const ranTool = this.chain.links.map(() => false);
    const sessions = this.chain.links.map((link, i) => link.open({ ...options, tools: watchedTools(options.tools, () => (ranTool[i] = true)) }));
    const chain = this.chain;
    async function* turn(caller: CallerTurn, ask: (session: DialogueSession, signal: AbortSignal) => AsyncIterable<DialogueEvent>, signal: AbortSignal) {
      let serving: number | undefined;
      let reply = "";
      const attempt = async function* (i: number, attemptSignal: AbortSignal) {
        serving = i;
        ranTool[i] = false;
        reply = "";
        for await (const event of ask(sessions[i]!, attemptSignal)) {
          if (event.type === "text") reply += event.text;
          yield event;
        }
      };
      try {
        yield* chain.serve(attempt, signal, { mayReplace: (i) => !ranTool[i] });
      } finally {
        // Also when cut short by a barge-in: the others must hold the reply its truncation cuts.
        sessions.forEach((other, j) => j !== serving && other.recordTurn?.(caller, reply));
      }
    }
    return {
      respond: (words, signal) => turn({ words }, (session, s) => session.respond(words, s), signal),
      respondToKeys: (keys, signal) => turn({ keys }, (session, s) => session.respondToKeys(keys, s), signal),
      truncateLastReply: (heard) => {
        for (const session of sessions) session.truncateLastReply(heard);
      },
      // Every link keeps the conversation: whichever answers next knows what was said and asked.
      agentSaid: (text) => {
        for (const session of sessions) session.agentSaid?.(text);
      },
      guide: (text) => {
        for (const session of sessions) session.guide?.(text);
      },
      ...(sessions[0]!.judgeTurn ? { judgeTurn: (text: string) => sessions[0]!.judgeTurn!(text) } : {}),
      // Every link keeps the conversation (recordTurn), so the first one's expectation holds whoever answered.
      ...(sessions[0]!.expectedSpeech ? { expectedSpeech: () => sessions[0]!.expectedSpeech!() } : {}),
    };
  }
}

/** `tools`, telling `ran` whenever one is executed. */
function watchedTools(tools: ToolExecutor, ran: () => void): ToolExecutor {
  return {
    definitions: tools.definitions,
    execute: (name, args, signal) => {
      ran();
      return tools.execute(name, args, signal);
    },
  };
}
