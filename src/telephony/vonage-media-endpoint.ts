import type { Logger } from "pino";
import type { WebSocket } from "ws";
import { VonageTransport } from "../../engine/index.js";
import type { Services } from "../services/container.js";
import { withCarrierControl } from "./carrier-call-control.js";
import { CarrierMediaEndpoint, type CarrierEndpointDeps, type CarrierStreamStart } from "./carrier-media-endpoint.js";
import { VONAGE_UUID } from "./carriers/vonage/vonage-api.js";
import type { LiveCallRunner } from "./media-endpoint.js";

/**
 * Largest message accepted: Vonage sends binary 20 ms frames (640 bytes at 16 kHz) and small
 * JSON (`websocket:connected` carries the NCCO's few headers).
 */
const VONAGE_MAX_MESSAGE_BYTES = 16 * 1024;

/** A Vonage stream whose call is controlled through Vonage's Voice API (see withCarrierControl). */
class ControlledVonageTransport extends withCarrierControl(VonageTransport) {}

/**
 * `/media/vonage`, an NCCO `connect` to a websocket endpoint. The stream authenticates in its
 * first message, `websocket:connected`, whose headers are the NCCO's: the single-use stream token
 * Parley put there (`stream_token`) when it answered Vonage's answer webhook or placed the call.
 * There is no other way in. The stream does not say its call; its token knows it (bound to the
 * call's UUID), and an inbound NCCO's `call_uuid` header, when there, must be that UUID.
 */
export class VonageMediaEndpoint extends CarrierMediaEndpoint<ControlledVonageTransport, CarrierStreamStart> {
  readonly path = "/media/vonage";
  protected readonly carrier = "vonage";

  constructor(services: Services, runner: LiveCallRunner, logger: Logger, carriers: CarrierEndpointDeps) {
    super(services, runner, logger, carriers, VONAGE_MAX_MESSAGE_BYTES);
  }

  protected transportFor(ws: WebSocket): ControlledVonageTransport {
    return new ControlledVonageTransport(ws);
  }

  protected async started(transport: ControlledVonageTransport): Promise<CarrierStreamStart> {
    const { headers } = await transport.waitForStart();
    const uuid = headers.call_uuid !== undefined && VONAGE_UUID.test(headers.call_uuid) ? headers.call_uuid : undefined;
    return { carrierCallId: uuid, streamToken: headers.stream_token, metadata: uuid ? { vonage_call_uuid: uuid } : {} };
  }
}
