import { describe, expect, it } from "vitest";
import { SipHeaders } from "../../../../../engine/transports/sip/sip-headers.js";
import { formatNameAddress, formatVia, parseNameAddress } from "../../../../../engine/transports/sip/sip-header-values.js";
import {
  buildResponse,
  getCallId,
  getContactUri,
  getCSeq,
  getFrom,
  getMaxForwards,
  getTo,
  getTopVia,
  getVias,
  parseSipMessage,
  serializeSipMessage,
  type SipMessage,
  type SipRequest,
} from "../../../../../engine/transports/sip/sip-message.js";
import { SipParseError } from "../../../../../engine/transports/sip/sip-parse-error.js";
import { formatSipUri, parseSipUri } from "../../../../../engine/transports/sip/sip-uri.js";
import { seededRandom } from "../../../../helpers/seeded-random.js";

const SDP = [
  "v=0",
  "o=user1 53655765 2353687637 IN IP4 127.0.0.1",
  "s=-",
  "c=IN IP4 127.0.0.1",
  "t=0 0",
  "m=audio 6000 RTP/AVP 0",
  "a=rtpmap:0 PCMU/8000",
  "",
].join("\r\n");

/** Lines joined with CRLF, an empty line, then the body. */
const datagram = (lines: string[], body = "", eol = "\r\n") => Buffer.from(lines.join(eol) + eol + eol + body);

/** An INVITE as sipp's built-in uac scenario sends it. */
const sippInvite = datagram(
  [
    "INVITE sip:service@127.0.0.1:5060 SIP/2.0",
    "Via: SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-4242-1-0",
    "From: sipp <sip:sipp@127.0.0.1:5061>;tag=4242SIPpTag001",
    "To: service <sip:service@127.0.0.1:5060>",
    "Call-ID: 1-4242@127.0.0.1",
    "CSeq: 1 INVITE",
    "Contact: sip:sipp@127.0.0.1:5061",
    "Max-Forwards: 70",
    "Subject: Performance Test",
    "Content-Type: application/sdp",
    `Content-Length:   ${Buffer.byteLength(SDP)}`,
  ],
  SDP,
);

const responseLines = (status: string, toTag = "") => [
  `SIP/2.0 ${status}`,
  "Via: SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-4242-1-0;received=127.0.0.1",
  "From: sipp <sip:sipp@127.0.0.1:5061>;tag=4242SIPpTag001",
  `To: service <sip:service@127.0.0.1:5060>${toTag}`,
  "Call-ID: 1-4242@127.0.0.1",
  "CSeq: 1 INVITE",
];

const parseRequest = (bytes: Buffer) => parseSipMessage(bytes) as SipRequest;

describe("parseSipMessage", () => {
  it("reads sipp's INVITE with its SDP body", () => {
    const invite = parseRequest(sippInvite);
    expect(invite).toMatchObject({ kind: "request", method: "INVITE", uri: "sip:service@127.0.0.1:5060" });
    expect(getTopVia(invite)).toEqual({ protocol: "SIP/2.0", transport: "UDP", host: "127.0.0.1", port: 5061, params: { branch: "z9hG4bK-4242-1-0" } });
    expect(getFrom(invite)).toMatchObject({ displayName: "sipp", uri: { scheme: "sip", user: "sipp", host: "127.0.0.1", port: 5061 }, params: { tag: "4242SIPpTag001" } });
    expect(getTo(invite).params.tag).toBeUndefined();
    expect(getCallId(invite)).toBe("1-4242@127.0.0.1");
    expect(getCSeq(invite)).toEqual({ seq: 1, method: "INVITE" });
    expect(getMaxForwards(invite)).toBe(70);
    expect(getContactUri(invite)).toMatchObject({ user: "sipp", host: "127.0.0.1", port: 5061 });
    expect(invite.headers.get("content-type")).toBe("application/sdp");
    expect(invite.body.toString()).toBe(SDP);
  });

  it.each([
    ["100 Trying", ""],
    ["180 Ringing", ";tag=as1"],
    ["486 Busy Here", ";tag=as1"],
  ])("reads a %s response", (status, toTag) => {
    const response = parseSipMessage(datagram([...responseLines(status, toTag), "Content-Length: 0"]));
    expect(response).toMatchObject({ kind: "response", status: Number(status.slice(0, 3)), reason: status.slice(4) });
    expect(getTopVia(response).params.received).toBe("127.0.0.1");
    expect(getTo(response).params.tag).toBe(toTag === "" ? undefined : "as1");
    expect(response.body.byteLength).toBe(0);
  });

  it("reads a 200 OK with a body, and a reason phrase with spaces or none", () => {
    const ok = parseSipMessage(datagram([...responseLines("200 OK", ";tag=as1"), "Content-Type: application/sdp", `Content-Length: ${SDP.length}`], SDP));
    expect(ok.body.toString()).toBe(SDP);
    expect(parseSipMessage(datagram([...responseLines("603"), "l: 0"]))).toMatchObject({ status: 603, reason: "" });
    expect(parseSipMessage(datagram([...responseLines("480 Temporarily Not Available"), "l: 0"]))).toMatchObject({ reason: "Temporarily Not Available" });
  });

  it("reads compact header names as their long forms", () => {
    const message = parseRequest(
      datagram(
        [
          "OPTIONS sip:parley@10.0.0.5 SIP/2.0",
          "v: SIP/2.0/UDP 10.0.0.9:5070;branch=z9hG4bKc1",
          "f: <sip:a@10.0.0.9>;tag=1",
          "t: <sip:parley@10.0.0.5>",
          "i: abc@10.0.0.9",
          "CSeq: 7 OPTIONS",
          "m: <sip:a@10.0.0.9:5070>",
          "k: replaces, timer",
          "s: hello",
          "e: gzip",
          "c: text/plain",
          "l: 2",
        ],
        "hi",
      ),
    );
    expect(getTopVia(message).port).toBe(5070);
    expect(getFrom(message).params.tag).toBe("1");
    expect(getCallId(message)).toBe("abc@10.0.0.9");
    expect(message.headers.getAll("Supported")).toEqual(["replaces", "timer"]);
    expect([message.headers.get("Subject"), message.headers.get("Content-Encoding"), message.headers.get("Content-Type")]).toEqual(["hello", "gzip", "text/plain"]);
    expect(getContactUri(message)?.port).toBe(5070);
    expect(message.body.toString()).toBe("hi");
    const text = serializeSipMessage(message).toString();
    expect(text).toContain("\r\nVia: SIP/2.0/UDP 10.0.0.9:5070;branch=z9hG4bKc1\r\n");
    expect(text).toContain("\r\nCall-ID: abc@10.0.0.9\r\n");
    expect(text).not.toMatch(/^[vftimkselc]:/m);
  });

  it("matches header names without regard to case", () => {
    const message = parseRequest(datagram(["BYE sip:x@h SIP/2.0", "VIA: SIP/2.0/UDP h;branch=z9hG4bK1", "from: <sip:a@h>;tag=1", "TO: <sip:x@h>;tag=2", "call-id: c", "cseq: 2 BYE"]));
    expect(getCSeq(message).seq).toBe(2);
    expect(message.headers.get("cAlL-iD")).toBe("c");
  });

  it("unfolds header values continued on lines starting with whitespace", () => {
    const message = parseRequest(
      datagram([
        "INVITE sip:x@h SIP/2.0",
        "Via: SIP/2.0/UDP h1;branch=z9hG4bK1,",
        "   SIP/2.0/UDP h2;branch=z9hG4bK2",
        "From: <sip:a@h>;tag=1",
        "To: <sip:x@h>",
        "Call-ID: c",
        "CSeq: 1 INVITE",
        "Subject: I know you're there,",
        "\tpick up the phone",
        "Content-Length: 0",
      ]),
    );
    expect(message.headers.get("Subject")).toBe("I know you're there, pick up the phone");
    expect(getVias(message).map((via) => via.host)).toEqual(["h1", "h2"]);
  });

  it("keeps several Via values in order, from separate lines and comma lists", () => {
    const message = parseRequest(
      datagram([
        "BYE sip:x@h SIP/2.0",
        "Via: SIP/2.0/UDP proxy1.example.com;branch=z9hG4bKp1;received=192.0.2.1, SIP/2.0/UDP proxy2.example.com:5080;branch=z9hG4bKp2",
        "Via: SIP/2.0/UDP 192.0.2.7:5062;branch=z9hG4bKua;rport=5062",
        "From: <sip:a@h>;tag=1",
        "To: <sip:x@h>;tag=2",
        "Call-ID: c",
        "CSeq: 3 BYE",
        "Date: Sat, 13 Nov 2010 23:29:00 GMT",
      ]),
    );
    expect(getVias(message).map((via) => [via.host, via.port, via.params.branch])).toEqual([
      ["proxy1.example.com", undefined, "z9hG4bKp1"],
      ["proxy2.example.com", 5080, "z9hG4bKp2"],
      ["192.0.2.7", 5062, "z9hG4bKua"],
    ]);
    expect(getVias(message)[2]!.params.rport).toBe("5062");
    // Commas inside a non-list header are not separators.
    expect(message.headers.getAll("Date")).toEqual(["Sat, 13 Nov 2010 23:29:00 GMT"]);
  });

  it("accepts bare LF line endings, and CRLFs before the start line", () => {
    const lfSdp = SDP.replaceAll("\r\n", "\n");
    const lf = Buffer.from("\r\n" + sippInvite.toString().replaceAll("\r\n", "\n").replace(/Length: +\d+/, `Length: ${lfSdp.length}`).replace(/\n\n[^]*$/, `\n\n${lfSdp}`));
    const message = parseRequest(lf);
    expect(message.method).toBe("INVITE");
    expect(getCSeq(message).method).toBe("INVITE");
    expect(message.body.toString()).toBe(SDP.replaceAll("\r\n", "\n"));
  });

  it("takes the rest of the datagram as the body when Content-Length is absent (UDP)", () => {
    const withoutLength = datagram(sippInvite.toString().split("\r\n\r\n")[0]!.split("\r\n").filter((line) => !line.startsWith("Content-Length")), SDP);
    expect(parseSipMessage(withoutLength).body.toString()).toBe(SDP);
  });

  it("cuts the body to Content-Length and drops the bytes after it", () => {
    const message = parseSipMessage(datagram([...responseLines("200 OK", ";tag=a"), "Content-Length: 4"], "v=0\r\ntrailing junk"));
    expect(message.body.toString()).toBe("v=0\r");
  });

  const malformed: Array<[string, Buffer]> = [
    ["an empty datagram", Buffer.alloc(0)],
    ["binary garbage", Buffer.from([0x80, 0x00, 0x12, 0x34, 0x0d, 0x0a, 0x0d, 0x0a, 0xff])],
    ["no empty line after the headers", Buffer.from("OPTIONS sip:x@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n")],
    ["an unsupported version", datagram(["INVITE sip:x@h SIP/3.0", "Via: SIP/2.0/UDP h;branch=z9hG4bK1"])],
    ["a status code out of range", datagram(["SIP/2.0 99 Odd", ...responseLines("x").slice(1)])],
    ["a Request-URI without a scheme", datagram(["INVITE x@h SIP/2.0", ...sippInvite.toString().split("\r\n").slice(1, 9)])],
    ["a missing Call-ID", datagram(responseLines("200 OK").filter((line) => !line.startsWith("Call-ID")))],
    ["a missing Via", datagram(responseLines("200 OK").slice(0, 1).concat(responseLines("200 OK").slice(2)))],
    ["a bad CSeq", datagram([...responseLines("200 OK").slice(0, 5), "CSeq: one INVITE"])],
    ["a CSeq method unlike the request's", datagram(sippInvite.toString().split("\r\n\r\n")[0]!.replace("CSeq: 1 INVITE", "CSeq: 1 BYE").split("\r\n"))],
    ["a datagram shorter than Content-Length", datagram([...responseLines("200 OK"), "Content-Length: 500"], SDP)],
    ["a non-numeric Content-Length", datagram([...responseLines("200 OK"), "Content-Length: ten"])],
    ["conflicting Content-Lengths", datagram([...responseLines("200 OK"), "Content-Length: 0", "l: 3"], "abc")],
    ["a bad Via", datagram(["SIP/2.0 200 OK", "Via: HTTP/1.1 h", ...responseLines("x").slice(2)])],
    ["a bad port", datagram(["SIP/2.0 200 OK", "Via: SIP/2.0/UDP h:70000;branch=z9hG4bK1", ...responseLines("x").slice(2)])],
    ["a From that is not a SIP URI", datagram([...responseLines("200 OK").slice(0, 2), "From: <http://example.com>;tag=1", ...responseLines("x").slice(3)])],
    ["an unterminated display name", datagram([...responseLines("200 OK").slice(0, 2), 'From: "sipp <sip:a@h>', ...responseLines("x").slice(3)])],
    ["a header line without a colon", datagram([...responseLines("200 OK"), "Garbage here"])],
    ["a continuation line right after the start line", datagram(["SIP/2.0 200 OK", " folded", ...responseLines("x").slice(1)])],
    ["too many header lines", datagram([...responseLines("200 OK"), ...Array.from({ length: 300 }, (_, i) => `X-H${i}: ${i}`)])],
    ["an oversized datagram", datagram(responseLines("200 OK"), "x".repeat(70_000))],
  ];

  it.each(malformed)("throws SipParseError for %s", (_, bytes) => {
    expect(() => parseSipMessage(bytes)).toThrow(SipParseError);
  });

  it("throws nothing but SipParseError on mutated messages", () => {
    const random = seededRandom(7);
    const source = [sippInvite, datagram([...responseLines("486 Busy Here", ";tag=a"), "Content-Length: 0"])];
    let parsed = 0;
    for (let round = 0; round < 2000; round++) {
      const bytes = Buffer.from(source[round % 2]!);
      for (let edits = 1 + Math.floor(random() * 4); edits > 0; edits--) {
        bytes[Math.floor(random() * bytes.length)] = [0x0d, 0x0a, 0x20, 0x3a, 0x3b, 0x3c, 0x22, 0x2c, Math.floor(random() * 256)][Math.floor(random() * 9)]!;
      }
      try {
        parseSipMessage(bytes.subarray(0, Math.floor(bytes.length * (0.5 + random() / 2))));
        parsed++;
      } catch (error) {
        expect(error).toBeInstanceOf(SipParseError);
      }
    }
    expect(parsed).toBeGreaterThan(0);
  });
});

describe("serializeSipMessage", () => {
  it("reproduces a message in canonical form byte for byte", () => {
    expect(serializeSipMessage(parseSipMessage(sippInvite)).equals(Buffer.from(sippInvite.toString().replace("Content-Length:   ", "Content-Length: ")))).toBe(true);
  });

  it("round-trips compact, folded, bare-LF input to the same message", () => {
    const odd = datagram(
      ["SIP/2.0 180 Ringing", "v: SIP/2.0/UDP a;branch=z9hG4bK1, SIP/2.0/UDP b;branch=z9hG4bK2", "f: <sip:a@h>;tag=1", "t: <sip:x@h>;", " tag=2", "i: c", "CSeq: 1 INVITE", "l: 7"],
      "ringing",
      "\n",
    );
    const once = parseSipMessage(odd);
    const twice = parseSipMessage(serializeSipMessage(once));
    expect(twice).toEqual(once);
    expect(serializeSipMessage(twice).equals(serializeSipMessage(once))).toBe(true);
    expect(serializeSipMessage(once).toString()).toMatch(/\r\nContent-Length: 7\r\n\r\nringing$/);
  });

  it("always writes a Content-Length that matches the body", () => {
    const message: SipMessage = { ...parseSipMessage(datagram([...responseLines("200 OK", ";tag=a"), "Content-Length: 0"])), body: Buffer.from("four") };
    expect(serializeSipMessage(message).toString()).toContain("Content-Length: 4\r\n\r\nfour");
    const noLength: SipMessage = { ...message, headers: new SipHeaders(message.headers.lines()).delete("Content-Length") };
    expect(serializeSipMessage(noLength).toString()).toMatch(/CSeq: 1 INVITE\r\nContent-Length: 4\r\n\r\nfour$/);
  });
});

describe("buildResponse", () => {
  const request = parseRequest(
    datagram([
      "INVITE sip:service@10.0.0.5 SIP/2.0",
      "Via: SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp1",
      "Via: SIP/2.0/UDP 10.0.0.9:5061;branch=z9hG4bKua;received=10.0.0.9",
      "Max-Forwards: 69",
      "From: <sip:a@10.0.0.9>;tag=ft",
      "To: <sip:service@10.0.0.5>",
      "Call-ID: call-1",
      "CSeq: 5 INVITE",
      "Timestamp: 54",
      "Content-Length: 0",
    ]),
  );

  it("copies Via (all, in order), From, To, Call-ID and CSeq, and adds the To tag asked for", () => {
    const response = buildResponse(request, 486, "Busy Here", { toTag: "tt" });
    expect(response).toMatchObject({ kind: "response", status: 486, reason: "Busy Here" });
    expect(response.headers.getAll("Via")).toEqual(request.headers.getAll("Via"));
    expect(getFrom(response).params.tag).toBe("ft");
    expect(getTo(response).params.tag).toBe("tt");
    expect([getCallId(response), getCSeq(response)]).toEqual(["call-1", { seq: 5, method: "INVITE" }]);
    expect(response.headers.has("Max-Forwards")).toBe(false);
    expect(response.headers.has("Timestamp")).toBe(false);
  });

  it("echoes Timestamp on 100, keeps an existing To tag, and carries extra headers and a body", () => {
    expect(buildResponse(request, 100, "Trying").headers.get("Timestamp")).toBe("54");
    const inDialog: SipRequest = { ...request, headers: request.headers.clone().set("To", "<sip:service@10.0.0.5>;tag=old") };
    const ok = buildResponse(inDialog, 200, "OK", { toTag: "new", headers: [["Content-Type", "application/sdp"]], body: Buffer.from(SDP) });
    expect(getTo(ok).params.tag).toBe("old");
    const reparsed = parseSipMessage(serializeSipMessage(ok));
    expect(reparsed.headers.get("Content-Type")).toBe("application/sdp");
    expect(reparsed.body.toString()).toBe(SDP);
  });
});

describe("SIP URIs and header values", () => {
  it.each([
    ["sip:alice:secret@example.com:5070;transport=udp;lr?subject=hi", { scheme: "sip", user: "alice", password: "secret", host: "example.com", port: 5070, params: { transport: "udp", lr: null }, headers: "subject=hi" }],
    ["sips:bob@[2001:db8::1]:5061", { scheme: "sips", user: "bob", host: "2001:db8::1", port: 5061, params: {} }],
    ["sip:10.0.0.1", { scheme: "sip", host: "10.0.0.1", params: {} }],
    ["sip:+15551234567;user=phone@gw.example.com;transport=udp", { scheme: "sip", user: "+15551234567;user=phone", host: "gw.example.com", params: { transport: "udp" } }],
    ["tel:+15551234567;phone-context=example.com", { scheme: "tel", user: "+15551234567", host: "", params: { "phone-context": "example.com" } }],
  ])("parses and formats %s", (text, expected) => {
    const uri = parseSipUri(text);
    expect(uri).toEqual(expected);
    expect(formatSipUri(uri)).toBe(text);
  });

  it.each(["http://example.com", "sip:", "sip:@host", "sip:bob@", "sip:bob@host:0", "sip:bob@[::1", "sip:bob@ho st", "tel:", "sip:a@h;=x", "sip:a@h;__proto__=x"])("refuses %s", (text) => {
    expect(() => parseSipUri(text)).toThrow(SipParseError);
  });

  it("reads name-addr forms: quoted names with escapes, bare tokens, addr-spec with header params", () => {
    expect(parseNameAddress('"Alice \\"A\\" Smith" <sip:alice@h>;tag=x')).toMatchObject({ displayName: 'Alice "A" Smith', params: { tag: "x" } });
    expect(parseNameAddress("Bob <sip:bob@h;transport=udp>;expires=60")).toMatchObject({ displayName: "Bob", uri: { params: { transport: "udp" } }, params: { expires: "60" } });
    expect(parseNameAddress("sip:carol@h;tag=9")).toMatchObject({ uri: { user: "carol", params: {} }, params: { tag: "9" } });
    const address = parseNameAddress('"A \\"q\\"" <sip:a@h>;tag=1');
    expect(parseNameAddress(formatNameAddress(address))).toEqual(address);
  });

  it("formats a Via back with received and rport", () => {
    const via = getTopVia(parseSipMessage(datagram(responseLines("200 OK"))));
    via.params.rport = "5061";
    expect(formatVia(via)).toBe("SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-4242-1-0;received=127.0.0.1;rport=5061");
  });
});
