import type { AgentRecord } from "../../db/repositories/agents.js";

export function presentAgent(agent: AgentRecord) {
  return {
    id: agent.id,
    name: agent.name,
    system_prompt: agent.system_prompt,
    voice_id: agent.voice_id,
    first_message: agent.first_message,
    language: agent.language,
    model: agent.model,
    temperature: agent.temperature,
    max_tokens: agent.max_tokens,
    interruption_threshold: agent.interruption_threshold,
    end_call_phrases: agent.end_call_phrases,
    status: agent.status,
    metadata: agent.metadata,
    transfer_enabled: agent.transfer_enabled,
    transfer_number: agent.transfer_number,
    transfer_message: agent.transfer_message,
    endpointing_mode: agent.endpointing_mode,
    endpointing_ms: agent.endpointing_ms,
    analysis_fields: agent.analysis_fields,
    tools: agent.tools,
    intents: agent.intents,
    knowledge_base_ids: agent.knowledge_base_ids,
    handoffs: agent.handoffs,
    reminder_minutes_before: agent.reminder_minutes_before,
    reminder_call: agent.reminder_call,
    reminder_call_inbound: agent.reminder_call_inbound,
    created_at: agent.created_at,
    updated_at: agent.updated_at,
  };
}
