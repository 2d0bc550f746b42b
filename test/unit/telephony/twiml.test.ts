import { describe, expect, it } from "vitest";
import twilio from "twilio";
import { connectStreamTwiml, dialTwiml, escapeXml, rejectTwiml } from "../../../src/telephony/carriers/twilio/twiml.js";
import { readConnectStream, readDial } from "../../helpers/twiml-read.js";

// The TwiML Parley answers Twilio with: the same documents Twilio's own library builds, and no
// value (a transfer target an agent chose, a stream parameter) can add elements or attributes.

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITY = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" } as Record<string, string>;
const decode = (s: string) => s.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ENTITY[name]!);

/**
 * A strict reader for the subset of XML TwiML uses (elements, double-quoted attributes, text,
 * the five named entities): throws on anything else, such as a stray `<` or `&`, a quote
 * inside an attribute value, a duplicate attribute or an unbalanced tag.
 */
function parseXml(xml: string): XmlElement {
  const declaration = '<?xml version="1.0" encoding="UTF-8"?>';
  if (!xml.startsWith(declaration)) throw new Error("no XML declaration");
  const text = xml.slice(declaration.length);
  const root: XmlElement = { name: "#document", attributes: {}, children: [], text: "" };
  const stack = [root];
  const token = /<\/([A-Za-z]+)>|<([A-Za-z]+)((?:\s+[A-Za-z_]+="[^"<]*")*)\s*(\/?)>|([^<]+)/y;
  const attribute = /\s+([A-Za-z_]+)="([^"<]*)"/g;
  const entities = /^(?:[^&]|&(?:amp|lt|gt|quot|apos);)*$/;
  while (token.lastIndex < text.length) {
    const at = token.lastIndex;
    const m = token.exec(text);
    if (!m) throw new Error(`not well-formed at ${at}: ${text.slice(at, at + 40)}`);
    const [, close, open, attrs, selfClosing, chars] = m;
    const top = stack[stack.length - 1]!;
    if (chars !== undefined) {
      if (!entities.test(chars) || chars.includes(">")) throw new Error(`unescaped text: ${chars}`);
      top.text += decode(chars);
    } else if (close !== undefined) {
      if (top.name !== close) throw new Error(`</${close}> closes <${top.name}>`);
      stack.pop();
    } else {
      const element: XmlElement = { name: open!, attributes: {}, children: [], text: "" };
      for (const a of attrs!.matchAll(attribute)) {
        if (a[1]! in element.attributes) throw new Error(`duplicate attribute ${a[1]}`);
        if (!entities.test(a[2]!) || a[2]!.includes(">")) throw new Error(`unescaped attribute: ${a[2]}`);
        element.attributes[a[1]!] = decode(a[2]!);
      }
      top.children.push(element);
      if (!selfClosing) stack.push(element);
    }
  }
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1]!.name}> never closed`);
  if (root.children.length !== 1 || root.text.trim()) throw new Error("not one root element");
  return root.children[0]!;
}

/** The element names as a nested outline: `Response(Connect(Stream(Parameter)))`. */
const outline = (e: XmlElement): string => e.name + (e.children.length ? `(${e.children.map(outline).join(",")})` : "");

const HOSTILE = [
  `"/><Parameter name="stream_token" value="forged`,
  `' onload='x`,
  "</Stream></Connect><Dial>+19005550000</Dial><Connect><Stream url=\"wss://evil.example\">",
  "&amp;&lt;&#x3C;&#60;",
  "a & b < c > d \" e ' f",
  "<![CDATA[x]]><!-- c --><?pi?>",
];

describe("connectStreamTwiml", () => {
  it("is the document Twilio's own library builds", () => {
    const expected = new twilio.twiml.VoiceResponse();
    const stream = expected.connect().stream({ url: "wss://parley.example/media/twilio" });
    stream.parameter({ name: "stream_token", value: "st_0123abcd" });
    stream.parameter({ name: "direction", value: "outbound" });
    expect(connectStreamTwiml("wss://parley.example/media/twilio", { stream_token: "st_0123abcd", direction: "outbound" })).toBe(expected.toString());
  });

  it("keeps hostile URLs, names and values inside their attributes", () => {
    for (const hostile of HOSTILE) {
      const parameters = { stream_token: hostile, [hostile]: "v" };
      const twiml = connectStreamTwiml(`wss://parley.example/media/twilio#${hostile}`, parameters);
      const doc = parseXml(twiml);
      expect(outline(doc)).toBe("Response(Connect(Stream(Parameter,Parameter)))");
      const stream = doc.children[0]!.children[0]!;
      expect(Object.keys(stream.attributes)).toEqual(["url"]);
      expect(stream.attributes.url).toBe(`wss://parley.example/media/twilio#${hostile}`);
      expect(stream.children.map((p) => p.attributes)).toEqual([
        { name: "stream_token", value: hostile },
        { name: hostile, value: "v" },
      ]);
      // What the Twilio stand-in reads (its own decoder) is the value given, not a forged one.
      expect(readConnectStream(twiml.replace(/url="[^"]*"/, 'url="wss://parley.example/media/twilio"')).parameters).toEqual(parameters);
    }
  });

  it("refuses characters XML cannot carry rather than write a document Twilio fails", () => {
    for (const bad of ["a\u0000b", "\u001b[31m", "\uFFFE", "\uD800"]) {
      expect(() => connectStreamTwiml("wss://parley.example/media/twilio", { stream_token: bad })).toThrow(RangeError);
    }
    // Tab, newline, carriage return and astral characters are XML.
    expect(() => connectStreamTwiml("wss://parley.example/media/twilio", { note: "a\tb\nc\rd 😀" })).not.toThrow();
  });
});

describe("dialTwiml", () => {
  it("dials a number as bare text and a SIP URI in <Sip>, as Twilio's own library does", () => {
    const number = new twilio.twiml.VoiceResponse();
    number.dial("+15550001111");
    expect(dialTwiml("+15550001111")).toBe(number.toString());
    const sip = new twilio.twiml.VoiceResponse();
    sip.dial().sip("sip:desk@pbx.example.com");
    expect(dialTwiml("sip:desk@pbx.example.com")).toBe(sip.toString());
    expect(outline(parseXml(dialTwiml("SIPS:desk@pbx.example.com")))).toBe("Response(Dial(Sip))");
  });

  it("keeps a hostile target text inside one <Dial>", () => {
    for (const hostile of [...HOSTILE, "+15550001111</Dial><Play>https://evil.example/a.mp3</Play><Dial>", "sip:x@y.example</Sip><Number>+19005550000</Number><Sip>sip:z"]) {
      const twiml = dialTwiml(hostile);
      const doc = parseXml(twiml);
      const sip = hostile.startsWith("sip:");
      expect(outline(doc)).toBe(sip ? "Response(Dial(Sip))" : "Response(Dial)");
      expect((sip ? doc.children[0]!.children[0]! : doc.children[0]!).text).toBe(hostile.trim());
      expect(readDial(twiml)).toBe(hostile.trim());
    }
  });

  it("refuses an empty target and characters XML cannot carry", () => {
    expect(() => dialTwiml("  ")).toThrow(RangeError);
    expect(() => dialTwiml("+1555\u0007")).toThrow(RangeError);
  });
});

describe("rejectTwiml", () => {
  it("rejects the call as Twilio's own library writes it", () => {
    const expected = new twilio.twiml.VoiceResponse();
    expected.reject({ reason: "rejected" });
    expect(rejectTwiml()).toBe(expected.toString());
    expect(parseXml(rejectTwiml()).children[0]).toEqual({ name: "Reject", attributes: { reason: "rejected" }, children: [], text: "" });
  });
});

describe("escapeXml", () => {
  it("escapes the five characters XML reserves, and only those", () => {
    expect(escapeXml(`&<>"'`)).toBe("&amp;&lt;&gt;&quot;&apos;");
    expect(escapeXml("+1 (555) 000-1111 sip:a@b;transport=tls")).toBe("+1 (555) 000-1111 sip:a@b;transport=tls");
  });
});
