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
  /** Silence that ends the caller's turn. */
  endpointingMs: number;
}
