import type { ContactRecord } from "../../db/repositories/campaign-contacts.js";
import type { CampaignView } from "../../services/campaigns.js";

export function presentCampaign(campaign: CampaignView) {
  const { counts } = campaign;
  return {
    id: campaign.id,
    name: campaign.name,
    agent_id: campaign.agent_id,
    status: campaign.status,
    settings: {
      max_concurrent: campaign.max_concurrent,
      retry_no_answer: campaign.retry_no_answer,
      schedule: campaign.schedule,
    },
    contacts: {
      total: counts.total,
      pending: counts.pending,
      in_progress: counts.in_progress,
      completed: counts.completed,
      failed: counts.failed,
      cancelled: counts.cancelled,
    },
    created_at: campaign.created_at,
    updated_at: campaign.updated_at,
  };
}

export function presentCampaignContact(contact: ContactRecord) {
  return {
    id: contact.id,
    phone: contact.phone,
    context: contact.context,
    status: contact.status,
    call_id: contact.call_id,
    attempts: contact.attempts,
  };
}
