import type { DialogueEvent, DialogueSession } from "../../engine/providers/llm/dialogue-provider.js";
import type { AgentSettings } from "../../engine/types.js";

/** Agent settings for engine tests: the API's defaults, a dental practice, overridable. */
export function testAgent(overrides: Partial<AgentSettings> = {}): AgentSettings {
  return {
    id: "agent_test",
    name: "Ava",
    systemPrompt: "You book dental appointments for Bright Smile Dental.",
    voiceId: "flite-rms",
    firstMessage: null,
    language: "en-US",
    model: "llm-small",
    temperature: 0.7,
    maxTokens: 150,
    interruptionThreshold: 0.5,
    endCallPhrases: [],
    transferEnabled: false,
    transferNumber: null,
    transferMessage: "Please hold while I transfer you to a member of our team.",
    endpointingMs: 500,
    metadata: {},
    ...overrides,
  };
}

/** One dialogue turn: every event the session streams for `text`. */
export async function say(session: DialogueSession, text: string, signal = new AbortController().signal): Promise<DialogueEvent[]> {
  const events: DialogueEvent[] = [];
  for await (const event of session.respond(text, signal)) events.push(event);
  return events;
}

/** The reply text of a turn's events, joined as the call session speaks it. */
export function spoken(events: readonly DialogueEvent[]): string {
  return events.map((e) => (e.type === "text" ? e.text : "")).join("");
}
