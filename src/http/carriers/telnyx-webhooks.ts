import express, { type Request, type Response, type Router } from "express";
import type { KeyObject } from "node:crypto";
import type { Logger } from "pino";
import { ApiError } from "../../core/api-error.js";
import type { Services } from "../../services/container.js";
import { TELNYX_PATHS, type TelnyxCarrier } from "../../telephony/carriers/telnyx/telnyx-carrier.js";
import { isTelnyxSignatureValid } from "../../telephony/carriers/telnyx/webhook-signature.js";
import { webhookBody } from "../middleware/webhook-body.js";
import { announcedNumbers, inboundStreamToken } from "./inbound-stream.js";

/** Telnyx's webhooks are JSON events of a few kilobytes. */
const BODY_LIMIT_BYTES = 64 * 1024;

interface TelnyxEvent {
  event_type?: unknown;
  payload?: { call_control_id?: unknown; direction?: unknown; from?: unknown; to?: unknown; hangup_cause?: unknown };
}

/**
 * Telnyx's Call Control webhooks (mounted at `/carriers`): `/carriers/telnyx/events`, for calls
 * to Telnyx numbers (the Call Control application's webhook URL) and for the calls Parley
 * places (`?call_id=`). Each must carry a valid ed25519 signature over `timestamp|body` made with
 * the key of PARLEY_TELNYX_PUBLIC_KEY, its timestamp within 5 minutes (403 otherwise). A call
 * coming in to a number held with carrier `telnyx` and a default agent is answered with its
 * audio streamed to `/media/telnyx` and a single-use stream token; any other is hung up.
 */
export function telnyxWebhooks(services: Services, carrier: TelnyxCarrier, publicKey: KeyObject, logger: Logger): Router {
  const router = express.Router();
  const signed = [
    webhookBody("raw", BODY_LIMIT_BYTES),
    (req: Request, _res: Response, next: (err?: unknown) => void) => {
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const valid = isTelnyxSignatureValid({ publicKey, signature: req.get("telnyx-signature-ed25519"), timestamp: req.get("telnyx-timestamp"), rawBody, now: Date.now() });
      if (!valid) return next(new ApiError(403, "invalid_signature", "telnyx-signature-ed25519 does not match this request or its timestamp is stale: check PARLEY_TELNYX_PUBLIC_KEY and the clock"));
      let event: unknown;
      try {
        event = (JSON.parse(rawBody.toString("utf8")) as { data?: unknown }).data;
      } catch {
        return next(new ApiError(400, "invalid_request", "The body is not JSON"));
      }
      req.body = event ?? {};
      next();
    },
  ];

  router.post(TELNYX_PATHS.events.replace("/carriers", ""), ...signed, (req, res) => {
    const event = req.body as TelnyxEvent;
    const payload = event.payload ?? {};
    const callControlId = typeof payload.call_control_id === "string" ? payload.call_control_id : undefined;
    const callId = typeof req.query.call_id === "string" ? req.query.call_id : undefined;
    res.status(200).json({ ok: true });
    if (event.event_type === "call.hangup" && callId && callControlId) carrier.hungUp(callId, callControlId, typeof payload.hangup_cause === "string" ? payload.hangup_cause : "unspecified");
    if (event.event_type === "call.initiated" && payload.direction === "incoming" && callControlId && !callId) {
      void answerIncoming(callControlId, payload).catch((err: unknown) => logger.warn({ err, call_control_id: callControlId }, "answering a Telnyx call failed"));
    }
  });

  /** Answers the call with a stream token when a number of Parley's takes it; hangs it up otherwise. */
  async function answerIncoming(callControlId: string, payload: NonNullable<TelnyxEvent["payload"]>): Promise<void> {
    const { to, from } = announcedNumbers(payload.to, payload.from);
    const token = await inboundStreamToken(services, logger, "telnyx", { to, from, carrierCallId: callControlId });
    if (!token) {
      await carrier.control(callControlId).hangUp();
      return;
    }
    await carrier.answer(callControlId, token);
  }

  return router;
}
