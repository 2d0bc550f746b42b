/**
 * The few NCCOs (Nexmo Call Control Objects: JSON lists of actions) Parley gives Vonage. Being
 * JSON, no value can add actions of its own; a transfer target (an agent's setting or a
 * language model's choice) is still checked, so Vonage is never asked to dial something that
 * is neither a phone number nor a SIP URI.
 */

/** An NCCO: a list of actions. */
export type Ncco = Array<Record<string, unknown>>;

/** What Parley asks Vonage to stream: 16-bit linear PCM at 16 kHz (the transport takes 8 kHz too). */
export const VONAGE_CONTENT_TYPE = "audio/l16;rate=16000";

const PHONE = /^\+?[1-9]\d{6,14}$/;
const SIP = /^sips?:[^\s]+$/i;
const MAX_SIP_URI = 512;
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Connects the call's audio, both ways, to the WebSocket at `uri` (`wss://.../media/vonage`).
 * `headers` come back in the stream's first message (`websocket:connected`): where the stream
 * token goes, never into the URL.
 */
export function connectWebsocketNcco(uri: string, headers: Readonly<Record<string, string>>): Ncco {
  return [{ action: "connect", endpoint: [{ type: "websocket", uri, "content-type": VONAGE_CONTENT_TYPE, headers: { ...headers } }] }];
}

/**
 * Transfers the call to `target`: a phone number (E.164, Vonage's form without the `+`) or a
 * `sip:` URI (a sip endpoint). Throws a RangeError for anything else.
 */
export function transferNcco(target: string): Ncco {
  const trimmed = typeof target === "string" ? target.trim() : "";
  if (!trimmed) throw new RangeError("a transfer needs a target");
  if (/^sips?:/i.test(trimmed)) {
    if (trimmed.length > MAX_SIP_URI || CONTROL.test(trimmed) || !SIP.test(trimmed)) throw new RangeError("a SIP transfer target must be a sip: URI");
    return [{ action: "connect", endpoint: [{ type: "sip", uri: trimmed }] }];
  }
  const number = trimmed.replace(/[\s().-]/g, "");
  if (!PHONE.test(number)) throw new RangeError("a transfer target must be an E.164 phone number or a sip: URI");
  return [{ action: "connect", endpoint: [{ type: "phone", number: number.replace(/^\+/, "") }] }];
}

/** Ends a call Parley does not answer: an empty NCCO, so Vonage hangs up at once. */
export function hangUpNcco(): Ncco {
  return [];
}
