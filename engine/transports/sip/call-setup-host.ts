import type { RtpSession } from "./rtp-session.js";
import type { LocalMedia } from "./sdp-negotiation.js";
import type { SipCall, SipCallHost } from "./sip-call.js";
import type { LocalEndpoint } from "./sip-dialog.js";
import type { SipRequest } from "./sip-message.js";
import type { SipAddress } from "./transaction.js";

/** The ACK of a call we placed and where it went: sent again when its 2xx is retransmitted. */
export interface SentAck {
  ack: SipRequest;
  destination: SipAddress;
}

/**
 * What setting up a call (IncomingCall, OutgoingCall) needs from the user agent that owns it:
 * besides what the call itself needs, our address, RTP and a place to keep the answered call so
 * that its dialog's requests reach it. The interface keeps the calls from importing SipUserAgent.
 */
export interface CallSetupHost extends SipCallHost {
  /** Our address as written into Via, Contact and SDP. */
  readonly endpoint: LocalEndpoint;
  /** A new RTP session on our address (and port range). */
  openRtp(): Promise<RtpSession>;
  /** Our side of the SDP for RTP on `port`. */
  localMedia(port: number): LocalMedia;
  /** The call is up: route its dialog's requests to it (and, for a call we placed, re-send its ACK on a retransmitted 2xx). */
  register(call: SipCall, ack?: SentAck): void;
}
