import type { Logger } from "pino";
import type { WebSocket } from "ws";
import { TelnyxTransport } from "../../engine/index.js";
import type { Services } from "../services/container.js";
import { withCarrierControl } from "./carrier-call-control.js";
import { CarrierMediaEndpoint, type CarrierEndpointDeps, type CarrierStreamStart } from "./carrier-media-endpoint.js";
import type { LiveCallRunner } from "./media-endpoint.js";

/** Largest message accepted: Telnyx's are small JSON (a 20 ms `media` message is about 300 bytes). */
const TELNYX_MAX_MESSAGE_BYTES = 16 * 1024;

/** A Telnyx stream whose call may be controlled through Call Control (see withCarrierControl). */
class ControlledTelnyxTransport extends withCarrierControl(TelnyxTransport) {}

/**
 * `/media/telnyx`, Telnyx's media streaming. Only streams Parley asked Telnyx for are taken: the
 * single-use stream token is the `client_state` Parley gave the call (base64), which Telnyx
 * repeats in the stream's `start` (see CarrierMediaEndpoint).
 */
export class TelnyxMediaEndpoint extends CarrierMediaEndpoint<ControlledTelnyxTransport, CarrierStreamStart> {
  readonly path = "/media/telnyx";
  protected readonly carrier = "telnyx";

  constructor(services: Services, runner: LiveCallRunner, logger: Logger, carriers: CarrierEndpointDeps) {
    super(services, runner, logger, carriers, TELNYX_MAX_MESSAGE_BYTES);
  }

  protected transportFor(ws: WebSocket): ControlledTelnyxTransport {
    return new ControlledTelnyxTransport(ws);
  }

  protected async started(transport: ControlledTelnyxTransport): Promise<CarrierStreamStart> {
    const start = await transport.waitForStart();
    const token = start.clientState === null ? start.parameters.stream_token : Buffer.from(start.clientState, "base64").toString("utf8");
    return { carrierCallId: start.callControlId, streamToken: token, metadata: { telnyx_call_control_id: start.callControlId, telnyx_stream_id: start.streamId } };
  }
}
