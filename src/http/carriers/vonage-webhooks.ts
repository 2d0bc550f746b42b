import express, { type Request, type Response, type Router } from "express";
import type { Logger } from "pino";
import { ApiError } from "../../core/api-error.js";
import { callerNumber, dialledNumber } from "../../core/phone-number.js";
import type { Services } from "../../services/container.js";
import { verifyVonageSignedWebhook } from "../../telephony/carriers/vonage/jwt.js";
import { connectWebsocketNcco, hangUpNcco } from "../../telephony/carriers/vonage/ncco.js";
import { VONAGE_UUID } from "../../telephony/carriers/vonage/vonage-api.js";
import { VONAGE_PATHS, type VonageCarrier } from "../../telephony/carriers/vonage/vonage-carrier.js";
import { websocketBase } from "../../telephony/carriers/public-url.js";
import { webhookBody } from "../middleware/webhook-body.js";
import { inboundStreamToken } from "./inbound-stream.js";

/** Vonage's webhooks are small JSON objects (an event is well under 1 KB). */
const BODY_LIMIT_BYTES = 16 * 1024;

/** A request's body as received, for `payload_hash`; empty for a GET. */
type Raw = Request & { rawBody?: Buffer };

/**
 * Vonage's webhooks (mounted at `/carriers`): the answer webhook a Vonage application's answer
 * URL points at (GET, or POST with JSON), answered with an NCCO that connects the call's audio to
 * `/media/vonage` with a single-use stream token, and the event webhook (POST JSON) that tells
 * how calls Parley placed went. Each request must carry Vonage's signed JWT (HS256 with
 * PARLEY_VONAGE_SIGNATURE_SECRET, this application's, recent, and bound to the exact body by its
 * `payload_hash`): 403 otherwise. Bodies are read raw (bounded) and parsed here, after the check.
 */
export function vonageWebhooks(services: Services, carrier: VonageCarrier, logger: Logger): Router {
  const { config } = services;
  const router = express.Router();
  const signed = [
    webhookBody("raw", BODY_LIMIT_BYTES),
    (req: Raw, _res: Response, next: (err?: unknown) => void) => {
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const valid = verifyVonageSignedWebhook({
        authorization: req.get("authorization"),
        signatureSecret: config.vonage.signatureSecret,
        rawBody,
        now: Date.now(),
        applicationId: config.vonage.applicationId,
      });
      if (!valid) return next(new ApiError(403, "invalid_signature", "The request's Vonage signature does not verify: check PARLEY_VONAGE_SIGNATURE_SECRET and PARLEY_VONAGE_APPLICATION_ID"));
      req.rawBody = rawBody;
      next();
    },
  ];

  const answer = async (req: Raw, res: Response) => {
    const fields = req.method === "GET" ? queryFields(req) : jsonFields(req.rawBody);
    const to = typeof fields.to === "string" && /^\d+$/.test(fields.to) ? dialledNumber(fields.to) : null;
    const from = typeof fields.from === "string" && /^\d+$/.test(fields.from) ? callerNumber(fields.from) : null;
    const uuid = typeof fields.uuid === "string" && VONAGE_UUID.test(fields.uuid) ? fields.uuid : null;
    const token = await inboundStreamToken(services, logger, "vonage", { to, from, carrierCallId: uuid });
    if (!token) {
      res.json(hangUpNcco());
      return;
    }
    // call_uuid comes back with the stream: its token is bound to the same UUID, which the endpoint checks.
    res.json(connectWebsocketNcco(`${websocketBase(config.baseUrl)}${VONAGE_PATHS.media}`, { stream_token: token, call_uuid: uuid as string }));
  };
  const answerPath = VONAGE_PATHS.answer.replace("/carriers", "");
  router.get(answerPath, ...signed, answer);
  router.post(answerPath, ...signed, answer);

  router.post(VONAGE_PATHS.events.replace("/carriers", ""), ...signed, (req: Raw, res) => {
    const event = jsonFields(req.rawBody);
    const callId = typeof req.query.call_id === "string" ? req.query.call_id : undefined;
    if (callId && typeof event.uuid === "string" && typeof event.status === "string") carrier.statusChanged(callId, event.uuid, event.status);
    res.status(204).end();
  });

  return router;
}

/** A GET webhook's parameters (a repeated one is not Vonage's: left out). */
function queryFields(req: Request): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(req.query)) if (typeof value === "string") fields[name] = value;
  return fields;
}

/** A JSON body's fields; a 400 for a body that is not a JSON object. */
function jsonFields(raw: Buffer | undefined): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse((raw ?? Buffer.alloc(0)).toString("utf8"));
  } catch {
    throw new ApiError(400, "invalid_request", "the webhook's body is not JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ApiError(400, "invalid_request", "the webhook's body is not a JSON object");
  return value as Record<string, unknown>;
}
