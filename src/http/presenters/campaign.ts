import type { ContactRecord } from "../../db/repositories/campaign-contacts.js";
import type { CallRecord } from "../../db/repositories/calls.js";
import { DEFAULT_CALLING_HOURS } from "../../core/calling-hours.js";
import type { CampaignView } from "../../services/campaigns.js";

export function presentCampaign(campaign: CampaignView) {
  return {
    id: campaign.id,
    name: campaign.name,
    agent_id: campaign.agent_id,
    status: campaign.status,
    paused_reason: campaign.paused_reason,
    settings: {
      max_concurrent: campaign.max_concurrent,
      retry_no_answer: campaign.retry_no_answer,
      schedule: campaign.schedule,
      from_number: campaign.from_number,
      max_attempts: campaign.max_attempts,
      retry_delay_minutes: campaign.retry_delay_minutes,
      calling_hours: campaign.calling_hours ?? DEFAULT_CALLING_HOURS,
      timezone: campaign.timezone,
    },
    contacts: campaign.counts,
    attempts: campaign.attempts,
    started_at: campaign.started_at,
    finished_at: campaign.finished_at,
    estimated_finish_at: campaign.estimated_finish_at,
    created_at: campaign.created_at,
    updated_at: campaign.updated_at,
  };
}

export function presentCampaignContact(contact: ContactRecord) {
  return {
    id: contact.id,
    phone: contact.phone,
    context: contact.context,
    timezone: contact.timezone,
    status: contact.status,
    reason: contact.reason,
    call_id: contact.call_id,
    attempts: contact.attempts,
    next_attempt_at: contact.next_attempt_at === null ? null : new Date(contact.next_attempt_at).toISOString(),
  };
}

/** One call made for a contact, as the contacts list shows it. */
export function presentContactAttempt(call: CallRecord) {
  return {
    call_id: call.id,
    status: call.status,
    outcome: call.outcome,
    duration_seconds: call.duration,
    created_at: call.created_at,
    ended_at: call.ended_at,
  };
}
