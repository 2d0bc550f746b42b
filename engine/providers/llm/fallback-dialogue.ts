import type { ToolExecutor } from "../../tools.js";
import type { ProviderChain } from "../provider-chain.js";
import type { DialogueEvent, DialogueProvider, DialogueSession } from "./dialogue-provider.js";

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

  open(options: Parameters<DialogueProvider["open"]>[0]): DialogueSession {
    const ranTool = this.chain.links.map(() => false);
    const sessions = this.chain.links.map((link, i) => link.open({ ...options, tools: watchedTools(options.tools, () => (ranTool[i] = true)) }));
    const turn = async function* (this: FallbackDialogueProvider, ask: (session: DialogueSession, signal: AbortSignal) => AsyncIterable<DialogueEvent>, userText: string, signal: AbortSignal) {
      let reply = "";
      const attempt = (i: number, attemptSignal: AbortSignal) => {
        ranTool[i] = false;
        reply = "";
        return ask(sessions[i]!, attemptSignal);
      };
      const collect = async function* (events: AsyncIterable<DialogueEvent>) {
        for await (const event of events) {
          if (event.type === "text") reply += event.text;
          yield event;
        }
      };
      const answeredBy = yield* this.chain.serve((i, s) => collect(attempt(i, s)), signal, { mayReplace: (i) => !ranTool[i] });
      if (!signal.aborted) sessions.forEach((other, j) => j !== answeredBy && other.recordTurn?.(userText, reply));
    }.bind(this);
    return {
      respond: (text, signal) => turn((session, s) => session.respond(text, s), text, signal),
      respondToKeys: (digits, signal) => turn((session, s) => session.respondToKeys(digits, s), `(pressed ${digits} on the phone)`, signal),
      truncateLastReply: (heard) => {
        for (const session of sessions) session.truncateLastReply(heard);
      },
      ...(sessions[0]!.judgeTurn ? { judgeTurn: (text: string) => sessions[0]!.judgeTurn!(text) } : {}),
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
