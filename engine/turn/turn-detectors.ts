import type { AgentSettings } from "../types.js";
import { AdaptiveTurnDetector } from "./adaptive-turn-detector.js";
import { FixedTurnDetector } from "./fixed-turn-detector.js";
import type { TurnDetector } from "./turn-detector.js";

/** The turn detector of the agent's `endpointing_mode`. */
export function turnDetectorFor(agent: Pick<AgentSettings, "endpointingMode" | "endpointingMs" | "interruptionThreshold">): TurnDetector {
  const { endpointingMs, interruptionThreshold } = agent;
  return agent.endpointingMode === "fixed"
    ? new FixedTurnDetector({ endpointingMs, interruptionThreshold })
    : new AdaptiveTurnDetector({ maxWaitMs: endpointingMs, interruptionThreshold });
}
