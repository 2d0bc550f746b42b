/**
 * The few TwiML documents Parley answers Twilio with. Every value is XML-escaped: a dial
 * target comes from an agent's transfer (a language model's choice) and a parameter may carry
 * anything, so none of them can close an element or an attribute and add verbs of its own.
 */

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/**
 * Characters XML 1.0 cannot carry at all, escaped or not (C0 controls other than tab, newline and
 * carriage return, lone surrogates, U+FFFE/U+FFFF): Twilio would fail the whole document.
 */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** `value` escaped for XML text or a double- or single-quoted attribute; throws a RangeError for characters XML cannot carry. */
export function escapeXml(value: string): string {
  if (NOT_XML.test(value)) throw new RangeError("a TwiML value holds a character XML cannot carry");
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const document = (verbs: string) => `${DECLARATION}<Response>${verbs}</Response>`;

/**
 * Connects the call's audio, both ways, to the WebSocket at `streamUrl` (Twilio wants `wss://`
 * and no query string), with `parameters` sent in the stream's `start` message as Twilio's
 * customParameters: where a stream token goes, never into the URL.
 */
export function connectStreamTwiml(streamUrl: string, parameters: Readonly<Record<string, string>>): string {
  const params = Object.entries(parameters)
    .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join("");
  return document(`<Connect><Stream url="${escapeXml(streamUrl)}">${params}</Stream></Connect>`);
}

/**
 * Transfers the call to `target`: a phone number, or a `sip:`/`sips:` URI (in `<Sip>`, which
 * Twilio needs to dial SIP). Throws a RangeError for an empty target.
 */
export function dialTwiml(target: string): string {
  const trimmed = target.trim();
  if (!trimmed) throw new RangeError("a transfer needs a target");
  const noun = /^sips?:/i.test(trimmed) ? `<Sip>${escapeXml(trimmed)}</Sip>` : escapeXml(trimmed);
  return document(`<Dial>${noun}</Dial>`);
}

/** Refuses an incoming call without answering it (the caller hears it rejected: the call is never answered). */
export function rejectTwiml(): string {
  return document('<Reject reason="rejected"/>');
}
