import type { Logger } from "pino";
import type { CarrierStreamTokens } from "../../services/carrier-stream-tokens.js";
import type { DialResult } from "../carrier.js";
import type { PendingDials } from "../pending-dials.js";

/** After the carrier's own ring timeout, how long a dial waits for its stream or final status before letting go. */
const GRACE_MS = 30_000;

export interface ApiDial {
  carrier: string;
  call: { id: string; accountId: string; to: string; from: string };
  tokens: CarrierStreamTokens;
  dials: PendingDials;
  ringTimeoutMs: number;
  logger: Logger;
  /** Places the call at the carrier with its stream carrying `token`; the carrier's id of the call. */
  place(token: string): Promise<string>;
  /** Cancels the placed call at the carrier (given up, or ended from the API while ringing). */
  cancel(carrierCallId: string): Promise<void>;
}

/**
 * An outbound call through a carrier's API whose media comes back on a WebSocket: a single-use
 * stream token is issued for it, the call placed with its stream carrying the token, the token
 * bound to the carrier's id of the call, and the dial waits (PendingDials) for the first of its
 * stream (answered) or a final status from the carrier's webhook. Aborting `signal`, or nothing
 * coming by the ring timeout plus 30 s, cancels it at the carrier.
 */
export async function dialThroughApi(dial: ApiDial, signal: AbortSignal): Promise<DialResult> {
  const { call, tokens, dials, logger } = dial;
  const waiting = dials.expect(call.id);
  const token = await tokens.issue(
    { carrier: dial.carrier, accountId: call.accountId, direction: "outbound", callId: call.id, agentId: null, phoneNumber: call.to, fromNumber: call.from, carrierCallId: null },
    dial.ringTimeoutMs + GRACE_MS,
  );
  let placed: string | undefined;
  const giveUp = (reason: string) => {
    waiting.settle({ outcome: "no_answer", reason });
    if (placed) void dial.cancel(placed).catch((err: unknown) => logger.warn({ err, call_id: call.id, carrier: dial.carrier }, "cancelling the call at the carrier failed"));
  };
  const abort = () => giveUp("cancelled");
  signal.addEventListener("abort", abort);
  const guard = setTimeout(() => giveUp(`no stream or final status from ${dial.carrier} in time`), dial.ringTimeoutMs + GRACE_MS);
  try {
    placed = await dial.place(token);
    waiting.placed(placed);
    // The stream must then come from this very call.
    await tokens.bind(dial.carrier, token, placed);
    if (signal.aborted) abort();
  } catch (err) {
    waiting.settle({ outcome: "failed", reason: `${dial.carrier} refused the call: ${(err as Error).message}` });
  }
  try {
    return await waiting.result;
  } finally {
    clearTimeout(guard);
    signal.removeEventListener("abort", abort);
  }
}
