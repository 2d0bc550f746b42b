import { abortableSleep } from "../../core/abortable-sleep.js";
import type { Carrier, DialResult } from "../carrier.js";
import type { UnansweredOutcome } from "../../services/call-lifecycle.js";
import { CALLEE_SCRIPT, SimulatedCallee, hasFixtureLine } from "./simulated-callee.js";

/** Numbers that end a simulated call without an answer (docs/api-resources.md lists them). */
export const SIMULATOR_MAGIC_NUMBERS: Readonly<Record<string, UnansweredOutcome>> = Object.freeze({
  "+15005550001": "busy",
  "+15005550002": "no_answer",
  "+15005550003": "failed",
});

/** What a test number's callee does: never answer (with this outcome), or answer and say these fixture lines (none: hang up at once). */
type FamilyCallee = UnansweredOutcome | { says: readonly string[] };

/**
 * Number families for tests where Parley, not the test, makes the call (campaigns, reminder
 * calls), 1,000 numbers each, the last three digits free: the callee answers and hangs up at
 * once, rings briefly and does not answer, is busy, the call fails, or the callee answers and
 * says a fixture line: asks not to be called again (`stop-calling`), or answers a reminder
 * call ("yes i will be there", "i need to cancel my appointment", "could we make it wednesday
 * at four in the afternoon"). The first four speak nothing, so a large campaign needs no
 * speech on its calls.
 */
export const SIMULATOR_NUMBER_FAMILIES: Readonly<Record<string, FamilyCallee>> = Object.freeze({
  "+15005551": { says: [] },
  "+15005552": "no_answer",
  "+15005553": "busy",
  "+15005554": "failed",
  "+15005555": { says: ["stop-calling"] },
  "+15005556": { says: ["i-will-be-there"] },
  "+15005557": { says: ["cancel-appointment"] },
  "+15005558": { says: ["move-appointment"] },
});

/** The family of `to` (`+15005551234` is family `+15005551`), if any. */
function numberFamily(to: string): FamilyCallee | undefined {
  return /^\+1500555[1-8]\d{3}$/.test(to) ? SIMULATOR_NUMBER_FAMILIES[to.slice(0, 9)] : undefined;
}

/** Ringing before a simulated callee answers, or before busy / failed come back. */
const RING_MS = 500;
/** How long the simulator rings an unanswered number before giving up. */
export const SIMULATOR_NO_ANSWER_MS = 3000;

/**
 * The default carrier: no telephone network. Magic numbers give busy, no answer or failed;
 * every other number is answered after a short ring by a SimulatedCallee that speaks fixture
 * audio to the agent, so the whole engine runs as on a real call.
 */
export class SimulatorCarrier implements Carrier {
  readonly name = "simulator";

  async dial(call: { to: string; metadata: Record<string, unknown> }, signal: AbortSignal): Promise<DialResult> {
    const family = numberFamily(call.to);
    if (family) return this.dialFamily(call.to, family, signal);
    const magic = SIMULATOR_MAGIC_NUMBERS[call.to];
    await abortableSleep(magic === "no_answer" ? SIMULATOR_NO_ANSWER_MS : RING_MS, signal);
    if (signal.aborted) return { outcome: "no_answer", reason: "dialling was abandoned" };
    if (magic) return { outcome: magic, reason: `simulator magic number ${call.to}` };
    const script = calleeScript(call.metadata.simulator_script);
    if (!script) return { outcome: "failed", reason: "metadata.simulator_script must list fixture lines (fixtures/audio)" };
    const callee = new SimulatedCallee(script);
    callee.start();
    return { outcome: "answered", transport: callee };
  }

  /** A family's callee: a short ring, then its fixed outcome or lines. */
  private async dialFamily(to: string, family: FamilyCallee, signal: AbortSignal): Promise<DialResult> {
    await abortableSleep(RING_MS, signal);
    if (signal.aborted) return { outcome: "no_answer", reason: "dialling was abandoned" };
    if (typeof family === "string") return { outcome: family, reason: `simulator test number ${to}` };
    const callee = family.says.length === 0 ? new SimulatedCallee([], 0) : new SimulatedCallee(family.says);
    callee.start();
    return { outcome: "answered", transport: callee };
  }
}

/** The callee's lines: `metadata.simulator_script` (fixture line names) when given, else the default script. */
function calleeScript(value: unknown): readonly string[] | null {
  if (value === undefined) return CALLEE_SCRIPT;
  if (!Array.isArray(value) || value.length === 0 || value.length > 20) return null;
  return value.every((line) => typeof line === "string" && hasFixtureLine(line)) ? (value as string[]) : null;
}
