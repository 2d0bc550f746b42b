import { isBackchannel, isInterruptRequest } from "./backchannel.js";

/**
 * Decides when caller speech over the agent interrupts it.
 * - Speech of `100 + (1 - interruption_threshold) * 500` ms interrupts, unless what was
 *   recognised so far is only backchannel words (or nothing yet) and the speech is still short
 *   enough to be one (`backchannelMaxMs`).
 * - Words asking to stop ("stop", "wait", "hold on") interrupt as soon as they are recognised.
 * - Speech longer than `backchannelMaxMs` interrupts whatever was recognised.
 */
export interface BargeInPolicyOptions {
  interruptionThreshold: number;
  backchannelMaxMs?: number;
}

export function bargeInDelayMs(interruptionThreshold: number): number {
  return 100 + (1 - interruptionThreshold) * 500;
}

export class BargeInPolicy {
  readonly delayMs: number;
  readonly backchannelMaxMs: number;

  constructor(options: BargeInPolicyOptions) {
    this.delayMs = bargeInDelayMs(options.interruptionThreshold);
    this.backchannelMaxMs = Math.max(options.backchannelMaxMs ?? 900, this.delayMs);
  }

  /** Whether caller speech of `speechMs`, recognised so far as `partialText`, interrupts now. */
  shouldInterrupt(speechMs: number, partialText: string): boolean {
    if (partialText && isInterruptRequest(partialText)) return true;
    if (speechMs < this.delayMs) return false;
    if (speechMs >= this.backchannelMaxMs) return true;
    return !isBackchannel(partialText) && partialText.trim() !== "";
  }

  /** After the caller's utterance ended without interrupting: does its final text interrupt? */
  interruptsAfterFinal(finalText: string): boolean {
    return finalText.trim() !== "" && (isInterruptRequest(finalText) || !isBackchannel(finalText));
  }
}
