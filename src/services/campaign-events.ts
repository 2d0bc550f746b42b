import type { Db } from "../db/database.js";
import { CampaignContactsRepository, type ContactCounts } from "../db/repositories/campaign-contacts.js";
import type { CampaignRecord } from "../db/repositories/campaigns.js";
import type { EventName } from "./event-names.js";
import type { Outbox } from "./outbox.js";

type CampaignEventName = Extract<EventName, `campaign.${string}`>;

/**
 * A campaign's events, written in the transaction that changes its status (so an event
 * exists exactly when its change does). Each carries the campaign as it is after the change
 * and its contacts' counts.
 */
export class CampaignEvents {
  constructor(private readonly outbox: Outbox) {}

  async record(name: CampaignEventName, campaign: CampaignRecord, trx: Db): Promise<void> {
    const counts = (await new CampaignContactsRepository(trx).counts([campaign.id])).get(campaign.id)!;
    await this.outbox.append([{ accountId: campaign.account_id, name, data: campaignEventData(campaign, counts) }], trx);
  }
}

function campaignEventData(campaign: CampaignRecord, counts: ContactCounts): Record<string, unknown> {
  return {
    campaign_id: campaign.id,
    name: campaign.name,
    agent_id: campaign.agent_id,
    status: campaign.status,
    paused_reason: campaign.paused_reason,
    contacts: counts,
    started_at: campaign.started_at,
    finished_at: campaign.finished_at,
  };
}
