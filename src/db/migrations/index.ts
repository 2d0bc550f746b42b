import type { Migration, MigrationProvider } from "kysely";
import * as initial from "./001-initial.js";
import * as nullableCallNumbers from "./002-nullable-call-numbers.js";
import * as events from "./003-events.js";
import * as phoneNumberApproval from "./004-phone-number-approval.js";
import * as hashedMediaToken from "./005-hashed-media-token.js";
import * as webhookDeliveries from "./006-webhook-deliveries.js";
import * as campaignRunner from "./007-campaign-runner.js";
import * as callResults from "./008-call-results.js";
import * as appointmentReminders from "./009-appointment-reminders.js";
import * as endpointingMode from "./010-endpointing-mode.js";
import * as webCallTokens from "./011-web-call-tokens.js";
import * as retention from "./012-retention.js";
import * as listIndexes from "./013-list-indexes.js";
import * as listItemsInIndexes from "./014-list-items-in-indexes.js";
import * as callCounts from "./015-call-counts.js";
import * as idempotencySecrets from "./016-idempotency-secrets.js";
import * as canonicalPhoneNumbers from "./017-canonical-phone-numbers.js";
import * as reminderCallInbound from "./018-reminder-call-inbound.js";
import * as nodes from "./019-nodes.js";
import * as creditHolds from "./020-credit-holds.js";
import * as rateWindows from "./021-rate-windows.js";
import * as changeNotifications from "./022-change-notifications.js";
import * as rateLeases from "./023-rate-leases.js";
import * as numberCarriers from "./024-number-carriers.js";
import * as carrierStreamTokens from "./025-carrier-stream-tokens.js";
import * as deliveryNotifications from "./026-delivery-notifications.js";
import * as secrets from "./027-secrets.js";
import * as testRuns from "./034-test-runs.js";
import * as agentRedact from "./035-agent-redact.js";
import * as callSupervision from "./036-call-supervision.js";
import * as testAudio from "./037-test-audio.js";
import * as testRunScenarioCount from "./038-test-run-scenario-count.js";
import * as agentTools from "./028-agent-tools.js";
import * as knowledgeBases from "./029-knowledge-bases.js";
import * as agentIntents from "./030-agent-intents.js";
import * as agentKnowledgeBases from "./031-agent-knowledge-bases.js";
import * as agentHandoffs from "./032-agent-handoffs.js";
import * as agentTransferMode from "./033-agent-transfer-mode.js";

/**
 * Migrations in order, bundled in the build (no directory scanning at run time).
 * Append new ones; never edit one that has shipped: existing databases have run it.
 */
const MIGRATIONS: Record<string, Migration> = {
  "001-initial": initial,
  "002-nullable-call-numbers": nullableCallNumbers,
  "003-events": events,
  "004-phone-number-approval": phoneNumberApproval,
  "005-hashed-media-token": hashedMediaToken,
  "006-webhook-deliveries": webhookDeliveries,
  "007-campaign-runner": campaignRunner,
  "008-call-results": callResults,
  "009-appointment-reminders": appointmentReminders,
  "010-endpointing-mode": endpointingMode,
  "011-web-call-tokens": webCallTokens,
  "012-retention": retention,
  "013-list-indexes": listIndexes,
  "014-list-items-in-indexes": listItemsInIndexes,
  "015-call-counts": callCounts,
  "016-idempotency-secrets": idempotencySecrets,
  "017-canonical-phone-numbers": canonicalPhoneNumbers,
  "018-reminder-call-inbound": reminderCallInbound,
  "019-nodes": nodes,
  "020-credit-holds": creditHolds,
  "021-rate-windows": rateWindows,
  "022-change-notifications": changeNotifications,
  "023-rate-leases": rateLeases,
  "024-number-carriers": numberCarriers,
  "025-carrier-stream-tokens": carrierStreamTokens,
  "026-delivery-notifications": deliveryNotifications,
  "027-secrets": secrets,
  "028-agent-tools": agentTools,
  "029-knowledge-bases": knowledgeBases,
  "030-agent-intents": agentIntents,
  "031-agent-knowledge-bases": agentKnowledgeBases,
  "032-agent-handoffs": agentHandoffs,
  "033-agent-transfer-mode": agentTransferMode,
  "034-test-runs": testRuns,
  "035-agent-redact": agentRedact,
  "036-call-supervision": callSupervision,
  "037-test-audio": testAudio,
  "038-test-run-scenario-count": testRunScenarioCount,
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return MIGRATIONS;
  },
};
