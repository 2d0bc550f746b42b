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
}

export const ENDPOINTING_MODES = ["adaptive", "fixed"] as const;
export type EndpointingMode = (typeof ENDPOINTING_MODES)[number];
