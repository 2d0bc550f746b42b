/**
 * Reads the few TwiML verbs a Twilio stand-in acts on, the way Twilio would refuse them: a
 * `<Connect><Stream>` (bidirectional media) with its `<Parameter>`s, and a `<Dial>`. A small
 * regular-expression reader over the XML Parley answers, not a general XML parser.
 */

/** A `<Connect><Stream>`: where Twilio opens its WebSocket and the custom parameters it sends in `start`. */
export interface ConnectStream {
  url: string;
  parameters: Record<string, string>;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith("#x")) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(parseInt(name.slice(1), 10));
    return ENTITIES[name] ?? whole;
  });
}

function attributes(tagBody: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tagBody.matchAll(/([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) out[m[1]!] = decodeXml(m[2] ?? m[3] ?? "");
  return out;
}

/** The document's `<Response>` body; throws when there is none (Twilio answers "application error"). */
function responseBody(twiml: string): string {
  const m = /^\s*(?:<\?xml[^>]*\?>\s*)?<Response\s*>([\s\S]*)<\/Response>\s*$/.exec(twiml);
  if (!m) throw new Error(`not a TwiML <Response>: ${twiml.slice(0, 200)}`);
  return m[1]!;
}

/**
 * The `<Connect><Stream>` of a TwiML document. Throws, as Twilio fails the call, when there is
 * none (a `<Start><Stream>` is one-way and not what a voice agent needs), when the URL is not
 * `wss://` or carries a query string (Twilio refuses both: parameters go in `<Parameter>`s).
 */
export function readConnectStream(twiml: string): ConnectStream {
  const body = responseBody(twiml);
  const connect = /<Connect\b[^>]*>([\s\S]*?)<\/Connect>/.exec(body);
  if (!connect) throw new Error(`no <Connect> in TwiML: ${twiml.slice(0, 200)}`);
  const stream = /<Stream\b([^>]*?)(?:\/>|>([\s\S]*?)<\/Stream>)/.exec(connect[1]!);
  if (!stream) throw new Error(`no <Stream> in <Connect>: ${twiml.slice(0, 200)}`);
  const url = attributes(stream[1]!).url ?? "";
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || parsed.protocol !== "wss:") throw new Error(`<Stream url> must be an absolute wss:// URL, got ${JSON.stringify(url)}`);
  if (parsed.search) throw new Error(`<Stream url> must not carry a query string (Twilio refuses it), got ${url}`);
  const parameters: Record<string, string> = {};
  for (const p of (stream[2] ?? "").matchAll(/<Parameter\b([^>]*?)\/?>/g)) {
    const { name, value } = attributes(p[1]!);
    if (name !== undefined) parameters[name] = value ?? "";
  }
  return { url, parameters };
}

/** The number (or SIP URI, client...) a `<Dial>` calls, or undefined when the TwiML does not dial. */
export function readDial(twiml: string): string | undefined {
  const dial = /<Dial\b[^>]*?(?:\/>|>([\s\S]*?)<\/Dial>)/.exec(responseBody(twiml));
  if (!dial) return undefined;
  const inner = (dial[1] ?? "").trim();
  const noun = /<(Number|Sip|Client)\b[^>]*>([\s\S]*?)<\/\1>/.exec(inner);
  return decodeXml((noun ? noun[2]! : inner).trim());
}
