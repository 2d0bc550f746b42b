import type { AgentSettings } from "./types.js";

/**
 * Tools the agent may use on a call. The control plane declares them and runs them; the engine
 * keeps no list of its own. A dialogue calls a tool, waits for its real result, and says what
 * really happened ("booked" only once the booking is stored).
 */

/** A tool offered to the agent: its name, what it does, and its parameters as JSON Schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * What a tool did. `data` is what the dialogue reads (an OpenAI-compatible model gets it as
 * the tool message). `then` asks the call to transfer, to end, or to pass the caller to
 * another agent once the reply is spoken.
 */
export type ToolResult =
  | { ok: true; data: Record<string, unknown>; then?: "transfer" | { endCall: string } | { handoff: Handoff } }
  | { ok: false; error: string; data?: Record<string, unknown> };

/**
 * Another agent taking the call over (a hand-off): its settings (voice, prompt, dialogue) and
 * the tools it is offered. The same executor runs them: the control plane switches it to the
 * new agent when the session reports the hand-off (the call's `handoff` event).
 */
export interface Handoff {
  agent: AgentSettings;
  tools: readonly ToolDefinition[];
}

/** Runs one call's tools (given by the control plane when it starts the call). */
export interface ToolExecutor {
  readonly definitions: readonly ToolDefinition[];
  /** Never rejects for a tool's own failure: that is `{ok: false}`; aborting `signal` gives up. */
  execute(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult>;
}

/**
 * The tool a call offers when its agent has knowledge bases: `{question}` in, `{passages}` out
 * (KnowledgePassage, best first). The dialogue runs it itself: a chat model gets the passages
 * in its context each turn (the tool is not offered to it), the `rules` dialogue answers a
 * question it has no FAQ for from the best passage.
 */
export const KNOWLEDGE_SEARCH_TOOL = "search_knowledge";

/** One passage of the agent's documents, as the knowledge search answers it. */
export interface KnowledgePassage {
  passage_id: string;
  document_name: string;
  text: string;
  /** Higher is better; comparable only within one answer. */
  score: number;
}

/** The passages of a knowledge search's result (none when it failed or found nothing). */
export function knowledgePassages(result: ToolResult): KnowledgePassage[] {
  const passages = result.ok ? result.data.passages : undefined;
  return Array.isArray(passages) ? passages.filter((p): p is KnowledgePassage => typeof p?.text === "string" && typeof p?.passage_id === "string") : [];
}

/** A call without tools (a test call, or an agent that may do nothing but talk). */
export const NO_TOOLS: ToolExecutor = Object.freeze({
  definitions: [],
  execute: async (name: string) => ({ ok: false, error: `there is no tool named ${name}` }) as ToolResult,
});
