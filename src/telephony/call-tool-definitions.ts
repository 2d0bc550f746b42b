import type { AgentSettings, ToolDefinition } from "../../engine/index.js";

// The tools an agent is offered on a call, as a model reads them. The executor (CallTools)
// runs them; the names here are the single source.

export const CALL_TOOL_NAMES = [
  "book_appointment",
  "transfer_call",
  "end_call",
  "do_not_call",
  "send_dtmf",
  "confirm_appointment",
  "cancel_appointment",
  "reschedule_appointment",
  "handoff",
] as const;
export type CallToolName = (typeof CALL_TOOL_NAMES)[number];

const BOOK_APPOINTMENT: ToolDefinition = {
  name: "book_appointment",
  description:
    "Book an appointment for the caller. Call it only after the caller has confirmed the name, service, date and time you read back to them. The result says whether it was booked; if the time is taken or outside opening hours it lists the nearest free times to offer instead.",
  parameters: {
    type: "object",
    properties: {
      customer_name: { type: "string", description: "The caller's full name." },
      date: { type: "string", description: "The appointment date, YYYY-MM-DD." },
      time: { type: "string", description: "The appointment start time, 24-hour HH:MM." },
      service: { type: "string", description: "What the appointment is for." },
      duration_minutes: { type: "integer", description: "Length of the appointment in minutes, if the business lists one for the service." },
    },
    required: ["customer_name", "date", "time", "service"],
    additionalProperties: false,
  },
};

const TRANSFER_CALL: ToolDefinition = {
  name: "transfer_call",
  description: "Transfer the caller to a human member of staff, when they ask for one or you cannot help. Tell the caller first.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
};

const END_CALL: ToolDefinition = {
  name: "end_call",
  description: "Hang up, once the conversation is over and you have said goodbye.",
  parameters: {
    type: "object",
    properties: { reason: { type: "string", description: "Why the call ends, in a few words, e.g. caller_goodbye or wrong_number." } },
    required: ["reason"],
    additionalProperties: false,
  },
};

const DO_NOT_CALL: ToolDefinition = {
  name: "do_not_call",
  description:
    "The caller asked not to be called again (stop calling, take me off your list): this puts their number on the do-not-call list. Then apologise briefly, confirm they will not be called again, say goodbye and call end_call with reason do_not_call.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
};

/** The longest key sequence one `send_dtmf` sends. */
export const MAX_DTMF_DIGITS = 32;

const SEND_DTMF: ToolDefinition = {
  name: "send_dtmf",
  description:
    "Press keys on the phone, to get through another company's phone menu (\"press 1 for appointments\") or to enter a number it asks for. Say nothing while a menu plays; press the key of the option you need.",
  parameters: {
    type: "object",
    properties: { digits: { type: "string", description: `The keys to press, in order: 0-9, * and #, at most ${MAX_DTMF_DIGITS}.` } },
    required: ["digits"],
    additionalProperties: false,
  },
};

// A reminder call's tools act on its own appointment (in the call's context): they take no id.
const CONFIRM_APPOINTMENT: ToolDefinition = {
  name: "confirm_appointment",
  description: "The customer said they will come to the appointment this call reminds them of: note it as confirmed.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
};

const CANCEL_APPOINTMENT: ToolDefinition = {
  name: "cancel_appointment",
  description: "The customer wants to cancel the appointment this call reminds them of: cancel it. Ask first if it is not clear.",
  parameters: { type: "object", properties: {}, additionalProperties: false },
};

const RESCHEDULE_APPOINTMENT: ToolDefinition = {
  name: "reschedule_appointment",
  description:
    "Move the appointment this call reminds them of to another day and time the customer asked for. The result says whether it was moved; if the time is taken or outside opening hours it lists the nearest free times to offer instead.",
  parameters: {
    type: "object",
    properties: {
      date: { type: "string", description: "The new date, YYYY-MM-DD." },
      time: { type: "string", description: "The new start time, 24-hour HH:MM." },
    },
    required: ["date", "time"],
    additionalProperties: false,
  },
};

/** Passes the caller to one of `handoffs`, described to the model by what each is for. */
export function handoffTool(handoffs: ReadonlyArray<{ agent_id: string; description: string }>): ToolDefinition {
  return {
    name: "handoff",
    description: [
      "Pass the caller to another agent of the business, who takes the call over at once with the conversation so far. Tell the caller first, in one short sentence. The agents, by id, and when to pass the caller to each:",
      ...handoffs.map((h) => `- ${h.agent_id}: ${h.description}`),
    ].join("\n"),
    parameters: {
      type: "object",
      properties: { agent_id: { type: "string", enum: handoffs.map((h) => h.agent_id), description: "The id of the agent to pass the caller to." } },
      required: ["agent_id"],
      additionalProperties: false,
    },
  };
}

/**
 * The tools offered for `agent` on a call: transfer only when the agent may transfer, keys
 * only when the call can send them (SIP), and on a reminder call the tools for its appointment.
 */
export function callToolDefinitions(agent: Pick<AgentSettings, "transferEnabled">, call: { canSendKeys: boolean; reminder?: boolean }): ToolDefinition[] {
  return [
    BOOK_APPOINTMENT,
    ...(agent.transferEnabled ? [TRANSFER_CALL] : []),
    END_CALL,
    DO_NOT_CALL,
    ...(call.canSendKeys ? [SEND_DTMF] : []),
    ...(call.reminder ? [CONFIRM_APPOINTMENT, CANCEL_APPOINTMENT, RESCHEDULE_APPOINTMENT] : []),
  ];
}
