import type { AgentSettings, DialogueIntent } from "../../engine/index.js";
import { isHandoffIntent, type AgentIntent, type AgentRecord } from "../db/repositories/agents.js";

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
    intents: agent.intents.map(dialogueIntent),
  };
}

/** A hand-off intent is the `handoff` tool called with its agent, asking nothing. */
function dialogueIntent(intent: AgentIntent): DialogueIntent {
  if (!isHandoffIntent(intent)) return intent;
  return { examples: intent.examples, tool: "handoff", slots: [], arguments: { agent_id: intent.handoff_to }, reply: intent.reply, failure: HANDOFF_FAILURE };
}

/** Said when a hand-off intent's agent cannot take the call (deleted since the agent was saved). */
const HANDOFF_FAILURE = "I'm sorry, I can't put you through to them right now.";
