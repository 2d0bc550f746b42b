// The API's fixed vocabularies, for filters and forms. They mirror the service's own lists
// (test/browser/console-static.test.ts checks that they still do).

export const CALL_STATUSES = ["queued", "ringing", "in_progress", "completed", "transferred", "failed", "no_answer", "busy"];
export const LIVE_CALL_STATUSES = ["queued", "ringing", "in_progress"];
export const CALL_DIRECTIONS = ["outbound", "inbound", "web"];
export const CALL_OUTCOMES = [
  "appointment_booked",
  "information_provided",
  "transferred",
  "voicemail_left",
  "callback_requested",
  "do_not_call",
  "not_interested",
  "no_action",
  "appointment_confirmed",
  "appointment_cancelled",
  "appointment_rescheduled",
];
export const AGENT_MODELS = ["llm-large", "llm-small", "llm-alt"];
export const ENDPOINTING_MODES = ["adaptive", "fixed"];
export const EVENT_NAMES = [
  "call.started",
  "call.ringing",
  "call.answered",
  "call.completed",
  "call.failed",
  "call.recording.ready",
  "call.transcript.ready",
  "agent.created",
  "agent.updated",
  "agent.deleted",
  "call.initiated",
  "call.transferred",
  "appointment.created",
  "appointment.updated",
  "appointment.cancelled",
  "appointment.reminder",
  "phone_number.assigned",
  "phone_number.released",
  "credits.low",
  "campaign.started",
  "campaign.paused",
  "campaign.completed",
  "campaign.cancelled",
];
export const WEBHOOK_STATUSES = ["active", "inactive", "failing"];
export const DELIVERY_STATUSES = ["pending", "sending", "delivered", "failed", "skipped"];
export const CAMPAIGN_STATUSES = ["scheduled", "running", "paused", "completed", "cancelled"];
export const CONTACT_STATUSES = ["pending", "calling", "completed", "no_answer", "busy", "failed", "skipped", "cancelled", "do_not_call"];

/** The permissions a key can hold (`*` is all of them; a `:write` includes its `:read`). */
export const PERMISSIONS = [
  "account:read",
  "agents:read",
  "agents:write",
  "calls:read",
  "calls:write",
  "numbers:read",
  "numbers:write",
  "webhooks:read",
  "webhooks:write",
  "campaigns:read",
  "campaigns:write",
  "appointments:read",
  "appointments:write",
];
