/**
 * The agent settings the engine needs to run a call: the control plane maps its agent rows
 * to this shape (the engine knows nothing about accounts or storage).
 */
export interface AgentSettings {
  id: string;
  name: string;
  systemPrompt: string;
  voiceId: string;
  firstMessage: string | null;
  language: string;
  model: string;
  temperature: number;
  maxTokens: number;
  /** 0..1; higher is easier to interrupt. */
  interruptionThreshold: number;
  endCallPhrases: string[];
  metadata: Record<string, unknown>;
  transferEnabled: boolean;
  transferNumber: string | null;
  transferMessage: string;
  /**
   * How the end of the caller's turn is decided: `fixed` waits `endpointingMs` of silence;
   * `adaptive` waits a short pause when the words so far form a complete turn, longer when
   * they do not, and never more than `endpointingMs`.
   */
  endpointingMode: EndpointingMode;
  /** Silence that ends the caller's turn (`fixed`), or the most it waits (`adaptive`). */
  endpointingMs: number;
  /** Requests the `rules` dialogue answers with one of the agent's tools; absent: none. */
  intents?: readonly DialogueIntent[];
}

/**
 * A request the `rules` dialogue answers by calling one of the agent's tools: a caller saying
 * something like one of `examples` is asked each of `slots` in turn, then the tool is called
 * with the answers as its arguments and the agent says `reply` (or `failure`). A tool whose
 * result passes the caller to another agent (a hand-off) ends the conversation here after `reply`.
 */
export interface DialogueIntent {
  /** Phrasings callers use ("where is my order"): matched on their topic words, as FAQ questions are. */
  examples: readonly string[];
  /** The tool called (one of the call's tools). */
  tool: string;
  /** The arguments asked for, in order: the tool's parameter and the question that asks for it. */
  slots: ReadonlyArray<{ name: string; question: string }>;
  /** Arguments the tool always gets with this intent (a hand-off intent's `agent_id`); the caller's answers come on top. */
  arguments?: Readonly<Record<string, unknown>>;
  /** Said after the tool answered: `{{key}}` is that key of its answer, or an argument the caller gave. */
  reply: string;
  /** Said when the tool failed. */
  failure: string;
}

export const ENDPOINTING_MODES = ["adaptive", "fixed"] as const;
export type EndpointingMode = (typeof ENDPOINTING_MODES)[number];
