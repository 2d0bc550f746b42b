import { describe, expect, it } from "vitest";
import { logLineScrubber, maskPhoneNumber } from "../../../src/core/log-scrub.js";
import { createLogger } from "../../../src/core/logger.js";
import { logLines } from "../../helpers/log-lines.js";

const scrub = logLineScrubber(["prov1der-Secret-key", 'trunk"pass\\word']);
/** A log line as pino writes it, with `fields` serialized. */
const line = (fields: Record<string, unknown>) => JSON.stringify({ level: 30, time: 1764099176123, pid: 4242, ...fields }) + "\n";

describe("maskPhoneNumber", () => {
  it("keeps the + , up to 4 leading digits and the last 3, hiding at least 4", () => {
    expect(maskPhoneNumber("+14155550123")).toBe("+1415****123");
    expect(maskPhoneNumber("+442079460958")).toBe("+4420*****958");
    expect(maskPhoneNumber("4155550123")).toBe("415****123");
    expect(maskPhoneNumber("+3541234567")).toBe("+354****567");
    expect(maskPhoneNumber("+6831234")).toBe("+****234");
    expect(maskPhoneNumber("+1 (415) 555-0123")).toBe("+1415****123");
    expect(maskPhoneNumber("911")).toBe("***");
  });
});

describe("logLineScrubber", () => {
  it("masks phone numbers in any field and inside messages, in E.164, grouped, URI and digits-only forms", () => {
    const cases: Array<[string, string]> = [
      ["SIP cannot call +14155550123: 503", "SIP cannot call +1415****123: 503"],
      ["+14155550123 is busy", "+1415****123 is busy"],
      ["ended (to +14155550123)", "ended (to +1415****123)"],
      ["dialling +1 (415) 555-0123 now", "dialling +1415****123 now"],
      ["INVITE sip:14155550123@trunk.example.com", "INVITE sip:1415****123@trunk.example.com"],
      ["INVITE sip:+14155550123@trunk.example.com", "INVITE sip:+1415****123@trunk.example.com"],
      ["tel:4155550123", "tel:415****123"],
      ["caller 14155550123 hung up", "caller 1415****123 hung up"],
      ["GET /v1/calls/14155550123", "GET /v1/calls/1415****123"],
      ["first line\nnumber 14155550123", "first line\nnumber 1415****123"],
      ["14155550123", "1415****123"],
    ];
    for (const [message, masked] of cases) {
      expect(JSON.parse(scrub(line({ msg: message }))).msg).toBe(masked);
    }
    expect(JSON.parse(scrub(line({ to: "+14155550123", nested: { from: "4155550123" } })))).toMatchObject({ to: "+1415****123", nested: { from: "415****123" } });
  });

  it("leaves identifiers, times, JSON numbers and short numbers alone", () => {
    const untouched = line({
      call_id: "call_4155550123456789012Ab",
      request_id: "req_Zz01234567890123456x",
      at: "2026-11-25T19:32:56.123Z",
      duration_ms: 123456789012,
      epoch: 1764099176123,
      port: 5060,
      address: "127.0.0.1:41555",
      msg: "call ended after 93 s, 12 turns, version 1.2.3456789012",
      float: 0.14155550123,
    });
    expect(scrub(untouched)).toBe(untouched);
  });

  it("removes every kind of credential, keeping only what says what it was", () => {
    const apiKey = "sk_parley_" + "aB3".repeat(13) + "x";
    const cases: Array<[string, string]> = [
      [`key ${apiKey} refused`, "key sk_parley_[redacted] refused"],
      ["token wct_9QeXk2v1rTzy8Lm0pQs7UvWx3Yz5Ab6Cd8Ef0Gh1Ij used", "token wct_[redacted] used"],
      ["media token mt_Ab3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW", "media token mt_[redacted]"],
      ["secret whsec_0123456789abcdef0123456789abcdef0123456789abcdef", "secret whsec_[redacted]"],
      ["Authorization: Bearer sk_live.abc/def+ghi=", "Authorization: Bearer [redacted]"],
      ["Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [redacted]"],
      [
        "fetch http://h/v1/calls/call_1/recording?expires=1764099176&signature=Zm9vYmFyYmF6cXV4_-1 failed",
        "fetch http://h/v1/calls/call_1/recording?expires=176****176&signature=[redacted] failed",
      ],
      ["deepgram said 401 for prov1der-Secret-key", "deepgram said 401 for [redacted]"],
      ['REGISTER refused with trunk"pass\\word', "REGISTER refused with [redacted]"],
    ];
    for (const [message, scrubbed] of cases) {
      expect(JSON.parse(scrub(line({ msg: message }))).msg).toBe(scrubbed);
    }
    // Not a media token: a word that merely ends in "mt_".
    const format = line({ msg: "format_mt_thing amt_1234567890" });
    expect(scrub(format)).toBe(format);
  });
});

describe("createLogger", () => {
  function captured(secrets: string[] = []) {
    const { destination, lines } = logLines();
    return { logger: createLogger("debug", { secrets, destination }), lines: () => lines };
  }

  it("masks phone fields whatever their format, redacts credential fields, and scrubs errors and bindings", async () => {
    const { logger, lines } = captured(["trunk-password-1"]);
    const child = logger.child({ call_id: "call_abc", note: "for +14155550123" });
    child.info({ phone_number: "(415) 555-0123", from_number: "+16505551234", headers: { authorization: "Bearer sk_parley_x" }, secret: "s3cret", event: { token: "t0k3n" } }, "call event");
    child.error({ err: new Error("SIP 403 for +14155550123 with trunk-password-1") }, "dialling failed");
    await new Promise((resolve) => setImmediate(resolve));
    const [event, failure] = lines();
    expect(event).toMatchObject({ call_id: "call_abc", note: "for +1415****123", phone_number: "415****123", from_number: "+1650****234", headers: { authorization: "[redacted]" }, secret: "[redacted]", event: { token: "[redacted]" } });
    expect(failure!.err.message).toBe("SIP 403 for +1415****123 with [redacted]");
    expect(failure!.err.stack).not.toContain("5550123");
    expect(failure!.err.stack).not.toContain("trunk-password-1");
  });
});
