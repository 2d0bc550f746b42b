import type { Services } from "../../services/container.js";
import type { RouteSpec } from "../route.js";
import { accountRoutes } from "./account.js";
import { agentRoutes } from "./agents.js";
import { voiceRoutes } from "./voices.js";

/** Every /v1 operation, in the order the OpenAPI document lists them. */
export function allRoutes(services: Services): RouteSpec[] {
  return [...accountRoutes(services), ...agentRoutes(services), ...voiceRoutes(services)];
}
