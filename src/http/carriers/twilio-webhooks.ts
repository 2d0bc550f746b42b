import express, { type Request, type Response, type Router } from "express";
import type { Logger } from "pino";
import { ApiError } from "../../core/api-error.js";
import type { Services } from "../../services/container.js";
import { isTwilioSignatureValid } from "../../telephony/carriers/twilio/request-signature.js";
import { TWILIO_PATHS, type TwilioCarrier } from "../../telephony/carriers/twilio/twilio-carrier.js";
import { websocketBase } from "../../telephony/carriers/public-url.js";
import { connectStreamTwiml, rejectTwiml } from "../../telephony/carriers/twilio/twiml.js";
import { webhookBody } from "../middleware/webhook-body.js";
import { announcedNumbers, inboundStreamToken } from "./inbound-stream.js";

/** Twilio's webhooks are small forms: a few dozen parameters. */
const FORM_LIMIT_BYTES = 16 * 1024;
const CALL_SID = /^CA[0-9a-fA-F]{32}$/;

/**
 * Twilio's webhooks (mounted at `/carriers`): the voice webhook a Twilio number's voice URL
 * points at, answered with TwiML that connects the call's audio to `/media/twilio` with a
 * single-use stream token, and the status callback of calls Parley placed. Each request must
 * carry a valid `X-Twilio-Signature` over PARLEY_BASE_URL + its path and its form parameters
 * (403 otherwise): the URL Twilio signed is the public one, which Parley knows only from the
 * setting.
 */
export function twilioWebhooks(services: Services, carrier: TwilioCarrier, logger: Logger): Router {
  const { config } = services;
  const router = express.Router();
  const signed = [
    webhookBody("form", FORM_LIMIT_BYTES),
    (req: Request, _res: Response, next: (err?: unknown) => void) => {
      const params = (req.body ?? {}) as Record<string, string | string[]>;
      const url = `${config.baseUrl.replace(/\/+$/, "")}${req.originalUrl}`;
      if (!isTwilioSignatureValid(config.twilio.authToken, url, params, req.get("x-twilio-signature"))) {
        return next(new ApiError(403, "invalid_signature", "X-Twilio-Signature does not match this request: check PARLEY_BASE_URL and PARLEY_TWILIO_AUTH_TOKEN"));
      }
      next();
    },
  ];

  router.post(TWILIO_PATHS.voice.replace("/carriers", ""), ...signed, async (req, res) => {
    const form = req.body as Record<string, unknown>;
    const { to, from } = announcedNumbers(form.To, form.From);
    const callSid = typeof form.CallSid === "string" && CALL_SID.test(form.CallSid) ? form.CallSid : null;
    const token = await inboundStreamToken(services, logger, "twilio", { to, from, carrierCallId: callSid });
    if (!token) {
      res.type("text/xml").send(rejectTwiml());
      return;
    }
    res.type("text/xml").send(connectStreamTwiml(`${websocketBase(config.baseUrl)}${TWILIO_PATHS.media}`, { stream_token: token }));
  });

  router.post(TWILIO_PATHS.status.replace("/carriers", ""), ...signed, (req, res) => {
    const form = req.body as Record<string, unknown>;
    const callId = typeof req.query.call_id === "string" ? req.query.call_id : undefined;
    if (callId && typeof form.CallSid === "string" && typeof form.CallStatus === "string") carrier.statusChanged(callId, form.CallSid, form.CallStatus);
    res.status(204).end();
  });

  return router;
}
