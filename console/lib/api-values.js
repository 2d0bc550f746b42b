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

/**
 * How the Account page learns what its key may do: no endpoint lists a key's permissions, so
 * each is tried with a request that changes nothing. A key that lacks the permission gets 403
 * `forbidden` (checked before anything else); any other answer means it holds it. The writes
 * send an empty body, which the API refuses (400) before doing anything.
 */
export const PERMISSION_PROBES = [
  ["account:read", "GET", "/v1/account"],
  ["agents:read", "GET", "/v1/agents?limit=1"],
  ["agents:write", "POST", "/v1/agents"],
  ["calls:read", "GET", "/v1/calls?limit=1"],
  ["calls:write", "POST", "/v1/calls"],
  ["numbers:read", "GET", "/v1/phone-numbers?limit=1"],
  ["numbers:write", "POST", "/v1/phone-numbers"],
  ["webhooks:read", "GET", "/v1/webhooks?limit=1"],
  ["webhooks:write", "POST", "/v1/webhooks"],
  ["campaigns:read", "GET", "/v1/campaigns?limit=1"],
  ["campaigns:write", "POST", "/v1/campaigns"],
  ["appointments:read", "GET", "/v1/appointments?limit=1"],
  ["appointments:write", "POST", "/v1/appointments/apt_probe/cancel"],
];
