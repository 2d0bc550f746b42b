import type { AgentSettings } from "../types.js";
import { SentenceSplitter } from "./sentence-splitter.js";
import { fillTemplate } from "./template.js";

/**
 * The greeting the agent opens a call with, sentence by sentence (its first sentence, or the
 * first clause of a long one, is said while the rest is rendered): `first_message` with the
 * call's `{{placeholders}}` filled. Empty when the agent has none.
 */
export function greetingSentences(agent: Pick<AgentSettings, "firstMessage" | "metadata">, context: Record<string, unknown>): string[] {
  if (!agent.firstMessage) return [];
  const text = fillTemplate(agent.firstMessage, { ...agent.metadata, ...context });
  if (!text) return [];
  const splitter = new SentenceSplitter();
  return [...splitter.push(text), ...splitter.flush()];
}
