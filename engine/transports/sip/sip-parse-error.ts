/** A datagram that is not a well-formed SIP message; `message` says why. */
export class SipParseError extends Error {
  override readonly name = "SipParseError";
}

/** Bounds a piece of hostile input quoted in an error message. */
export function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}
