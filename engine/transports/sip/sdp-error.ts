/**
 * Why a session description was refused. The SIP layer maps these to responses: `malformed` to
 * 400 (or 488 inside a dialog), the others to 488 Not Acceptable Here.
 */
export const SDP_ERROR_REASONS = [
  /** Not SDP: a missing or broken v=, o=, c= or m= line, or no connection address for a stream. */
  "malformed",
  /** No audio stream we could use (none offered, or the answer rejected ours with port 0). */
  "no_audio",
  /** An audio stream, but no PCMU/PCMA over RTP/AVP in it. */
  "no_common_codec",
  /** The connection address is not IPv4. */
  "unsupported_address",
] as const;
export type SdpErrorReason = (typeof SDP_ERROR_REASONS)[number];

export class SdpError extends Error {
  override readonly name = "SdpError";

  constructor(
    readonly reason: SdpErrorReason,
    message: string,
  ) {
    super(message);
  }
}
