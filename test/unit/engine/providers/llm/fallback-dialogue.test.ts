import { describe, expect, it } from "vitest";
import { FallbackDialogueProvider } from "../../../../../engine/providers/llm/fallback-dialogue.js";
import type { CallerTurn, DialogueEvent, DialogueProvider, DialogueSession } from "../../../../../engine/providers/llm/dialogue-provider.js";
import { ProviderChain, type ProviderSwitch } from "../../../../../engine/providers/provider-chain.js";
import { ProviderError } from "../../../../../engine/providers/provider-error.js";
import type { ToolExecutor } from "../../../../../engine/tools.js";
import type { AgentSettings } from "../../../../../engine/types.js";

const retryable = () => new ProviderError("HTTP 503", { retryable: true });

/** How a fake provider answers a turn (words or keys), given its tools. */
type Answer = (input: string, tools: ToolExecutor, signal: AbortSignal) => AsyncIterable<DialogueEvent>;

/** A fake dialogue provider: every call its one session got. */
class FakeDialogue implements DialogueProvider {
  readonly asked: Array<{ words: string } | { keys: string }> = [];
  readonly recorded: Array<[CallerTurn, string]> = [];
  readonly truncated: string[] = [];
  readonly judged: string[] = [];

  constructor(
    readonly name: string,
    private readonly answer: Answer,
  ) {}

  open(options: { tools: ToolExecutor }): DialogueSession {
    return {
      respond: (words, signal) => {
        this.asked.push({ words });
        return this.answer(words, options.tools, signal);
      },
      respondToKeys: (keys, signal) => {
        this.asked.push({ keys });
        return this.answer(keys, options.tools, signal);
      },
      truncateLastReply: (heard) => void this.truncated.push(heard),
      recordTurn: (caller, reply) => void this.recorded.push([caller, reply]),
      judgeTurn: (text) => {
        this.judged.push(text);
        return this.name === "first" ? "complete" : "incomplete";
      },
    };
  }
}

const failing: Answer = async function* () {
  throw retryable();
};
const replying =
  (...pieces: string[]): Answer =>
  async function* (input) {
    for (const piece of pieces) yield { type: "text", text: piece.replace("$", input) };
  };

const tools = (): ToolExecutor & { executed: string[] } => {
  const executed: string[] = [];
  return { executed, definitions: [], execute: async (name) => (executed.push(name), { ok: true, data: {} }) };
};

function dialogueOf(links: FakeDialogue[]) {
  const switches: ProviderSwitch[] = [];
  const fallback = new FallbackDialogueProvider(new ProviderChain("dialogue", links, { onSwitch: (change) => switches.push(change) }));
  const executor = tools();
  const session = fallback.open({ agent: {} as AgentSettings, context: {}, tools: executor });
  return { session, switches, executor, fallback };
}

async function all(events: AsyncIterable<DialogueEvent>): Promise<DialogueEvent[]> {
  const seen: DialogueEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const signal = () => new AbortController().signal;

describe("FallbackDialogueProvider", () => {
  it("answers a turn the first fails before saying anything with the second, and records it in the first", async () => {
    const first = new FakeDialogue("first", failing);
    const second = new FakeDialogue("second", replying("You said ", "$."));
    const { session, switches, fallback } = dialogueOf([first, second]);
    expect(fallback.name).toBe("first");
    expect(await all(session.respond("hello", signal()))).toEqual([
      { type: "text", text: "You said " },
      { type: "text", text: "hello." },
    ]);
    expect(switches).toEqual([{ stage: "dialogue", from: "first", to: "second", reason: "error" }]);
    expect(first.recorded).toEqual([[{ words: "hello" }, "You said hello."]]);
    expect(second.recorded).toEqual([]);
  });

  it("passes keys as keys, to the next provider too, and records them as keys", async () => {
    const first = new FakeDialogue("first", failing);
    const second = new FakeDialogue("second", replying("Key $."));
    const { session } = dialogueOf([first, second]);
    expect(await all(session.respondToKeys("42", signal()))).toEqual([{ type: "text", text: "Key 42." }]);
    expect(first.asked).toEqual([{ keys: "42" }]);
    expect(second.asked).toEqual([{ keys: "42" }]);
    expect(first.recorded).toEqual([[{ keys: "42" }, "Key 42."]]);
  });

  it("records a turn the first answers in the others", async () => {
    const first = new FakeDialogue("first", replying("Hi."));
    const second = new FakeDialogue("second", replying("unused"));
    const { session } = dialogueOf([first, second]);
    await all(session.respond("hello", signal()));
    expect(second.asked).toEqual([]);
    expect(second.recorded).toEqual([[{ words: "hello" }, "Hi."]]);
    expect(first.recorded).toEqual([]);
  });

  it("does not hand on a turn whose provider ran a tool before failing: the error is thrown, the second never asked", async () => {
    const error = retryable();
    const first = new FakeDialogue("first", async function* (_input, tools, signal) {
      await tools.execute("book_appointment", { day: "monday" }, signal);
      throw error;
    });
    const second = new FakeDialogue("second", replying("Booked again."));
    const { session, switches, executor } = dialogueOf([first, second]);
    await expect(all(session.respond("book me", signal()))).rejects.toBe(error);
    expect(executor.executed).toEqual(["book_appointment"]);
    expect(second.asked).toEqual([]);
    expect(switches).toEqual([]);
  });

  it("hands on a later turn of the same provider once its tool-running turn is over", async () => {
    let turns = 0;
    const first = new FakeDialogue("first", async function* (_input, tools, signal) {
      if (turns++ === 0) {
        await tools.execute("lookup", {}, signal);
        yield { type: "text", text: "Found it." };
        return;
      }
      throw retryable();
    });
    const second = new FakeDialogue("second", replying("Second here."));
    const { session } = dialogueOf([first, second]);
    expect(await all(session.respond("look it up", signal()))).toEqual([{ type: "text", text: "Found it." }]);
    expect(await all(session.respond("and then?", signal()))).toEqual([{ type: "text", text: "Second here." }]);
  });

  it("records the part of a reply said before a barge-in in the others", async () => {
    const first = new FakeDialogue("first", replying("Hello", " there", " caller."));
    const second = new FakeDialogue("second", replying("unused"));
    const { session } = dialogueOf([first, second]);
    for await (const event of session.respond("hi", signal())) {
      expect(event).toEqual({ type: "text", text: "Hello" });
      break;
    }
    expect(second.recorded).toEqual([[{ words: "hi" }, "Hello"]]);
  });

  it("truncates the last reply in every session", () => {
    const first = new FakeDialogue("first", replying("a"));
    const second = new FakeDialogue("second", replying("b"));
    const { session } = dialogueOf([first, second]);
    session.truncateLastReply("You said");
    expect(first.truncated).toEqual(["You said"]);
    expect(second.truncated).toEqual(["You said"]);
  });

  it("judges a turn with the first session", () => {
    const first = new FakeDialogue("first", replying("a"));
    const second = new FakeDialogue("second", replying("b"));
    const { session } = dialogueOf([first, second]);
    expect(session.judgeTurn?.("I would like to")).toBe("complete");
    expect(first.judged).toEqual(["I would like to"]);
    expect(second.judged).toEqual([]);
  });
});
