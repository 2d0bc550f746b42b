import type { ToolExecutor, ToolResult } from "../../engine/tools.js";
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
    endpointingMode: "fixed",
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

/** A tool executor for dialogue tests: records each call and answers as `answer` says (by default, every tool works). */
export function recordingTools(answer: (name: string, args: Record<string, unknown>) => ToolResult | Promise<ToolResult> = defaultAnswer) {
  const calls: Array<{ name: string; arguments: Record<string, unknown> }> = [];
  const tools: ToolExecutor & { calls: typeof calls; take(): typeof calls } = {
    definitions: [],
    calls,
    async execute(name, args) {
      calls.push({ name, arguments: args });
      return answer(name, args);
    },
    /** The calls since the last `take`. */
    take: () => calls.splice(0),
  };
  return tools;
}

function defaultAnswer(name: string, args: Record<string, unknown>): ToolResult {
  if (name === "transfer_call") return { ok: true, data: { status: "transferring" }, then: "transfer" };
  if (name === "end_call") return { ok: true, data: { status: "ending" }, then: { endCall: String(args.reason ?? "agent_ended") } };
  return { ok: true, data: { status: name === "book_appointment" ? "booked" : "ok" } };
}
