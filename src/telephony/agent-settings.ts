import type { AgentSettings } from "../../engine/index.js";
import type { AgentRecord } from "../db/repositories/agents.js";

/** The engine's view of an agent row. */
export function toAgentSettings(agent: AgentRecord): AgentSettings {
  return {
    id: agent.id,
    name: agent.name,
    systemPrompt: agent.system_prompt,
    voiceId: agent.voice_id,
    firstMessage: agent.first_message,
    language: agent.language,
    model: agent.model,
    temperature: agent.temperature,
    maxTokens: agent.max_tokens,
    interruptionThreshold: agent.interruption_threshold,
    endCallPhrases: agent.end_call_phrases,
    metadata: agent.metadata,
    transferEnabled: agent.transfer_enabled,
    transferNumber: agent.transfer_number,
    transferMessage: agent.transfer_message,
    endpointingMode: agent.endpointing_mode,
    endpointingMs: agent.endpointing_ms,
    intents: agent.intents,
  };
}
