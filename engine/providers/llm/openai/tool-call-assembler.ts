import type { ChatToolCall, ChatToolCallDelta } from "./chat-completions-wire.js";

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Puts streamed tool calls back together. OpenAI sends the id and name in a call's first piece
 * and the JSON arguments in fragments after it, all keyed by `index`; Ollama sends whole calls,
 * older versions without `index`. So: by `index` when given, else by `id`, else by position.
 */
export class ToolCallAssembler {
  private readonly calls: PartialCall[] = [];
  private readonly byIndex = new Map<number, PartialCall>();
  private readonly byId = new Map<string, PartialCall>();

  push(deltas: readonly ChatToolCallDelta[]): void {
    deltas.forEach((delta, position) => {
      const call = this.callFor(delta, position);
      if (delta.id && call.id === "") {
        call.id = delta.id;
        this.byId.set(delta.id, call);
      }
      const name = delta.function?.name;
      // The name comes whole in the first piece; a server that repeats it must not double it.
      if (name && name !== call.name) call.name += name;
      call.arguments += delta.function?.arguments ?? "";
    });
  }

  /** The complete calls in the order they started; calls that never got a name are dropped. */
  finish(): ChatToolCall[] {
    return this.calls
      .filter((call) => call.name !== "")
      .map((call, i) => ({ id: call.id || `call_${i}`, type: "function", function: { name: call.name, arguments: call.arguments } }));
  }

  private callFor(delta: ChatToolCallDelta, position: number): PartialCall {
    if (delta.index !== undefined) return this.byIndex.get(delta.index) ?? this.start(delta.index);
    if (delta.id) return this.byId.get(delta.id) ?? this.start(this.byIndex.has(position) ? null : position);
    return this.byIndex.get(position) ?? this.start(position);
  }

  private start(index: number | null): PartialCall {
    const call: PartialCall = { id: "", name: "", arguments: "" };
    this.calls.push(call);
    if (index !== null) this.byIndex.set(index, call);
    return call;
  }
}
