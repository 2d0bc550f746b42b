import type { Services } from "../../services/container.js";
import type { RouteSpec } from "../route.js";
import { accountRoutes } from "./account.js";
import { agentRoutes } from "./agents.js";
import { appointmentRoutes } from "./appointments.js";
import { callRoutes } from "./calls.js";
import { campaignRoutes } from "./campaigns.js";
import { doNotCallRoutes } from "./do-not-call.js";
import { eventRoutes } from "./events.js";
import { testRunRoutes } from "./test-runs.js";
import { callSupervisionRoutes } from "./call-supervision.js";
import { testAudioRoutes } from "./test-audio.js";
import { knowledgeBaseRoutes } from "./knowledge-bases.js";
import { phoneNumberRoutes } from "./phone-numbers.js";
import { secretRoutes } from "./secrets.js";
import { voiceRoutes } from "./voices.js";
import { webhookRoutes } from "./webhooks.js";

/** Every /v1 operation, in the order the OpenAPI document lists them. */
export function allRoutes(services: Services): RouteSpec[] {
  return [...accountRoutes(services), ...agentRoutes(services), ...callRoutes(services), ...phoneNumberRoutes(services), ...voiceRoutes(services), ...webhookRoutes(services), ...secretRoutes(services), ...knowledgeBaseRoutes(services), ...eventRoutes(services), ...campaignRoutes(services), ...doNotCallRoutes(services), ...appointmentRoutes(services), ...testRunRoutes(services), ...callSupervisionRoutes(services), ...testAudioRoutes(services)];
}
