import { describe, expect, it } from "vitest";
import { SdpError, type SdpErrorReason } from "../../../../../engine/transports/sip/sdp-error.js";
import { answerOffer, createOffer, readAnswer, type LocalMedia } from "../../../../../engine/transports/sip/sdp-negotiation.js";
import { parseSdp, writeSdp } from "../../../../../engine/transports/sip/sdp.js";

const LOCAL: LocalMedia = { address: "192.0.2.10", port: 10000, sessionId: "4242" };

/** An offer from 127.0.0.1:6000 with this m= line and these attribute lines. */
function offer(mLine: string, ...attributes: string[]): string {
  return ["v=0", "o=user1 53655765 2353687637 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0", mLine, ...attributes, ""].join("\r\n");
}

function refusal(text: string): SdpErrorReason {
  try {
    answerOffer(parseSdp(text), LOCAL);
  } catch (error) {
    if (error instanceof SdpError) return error.reason;
    throw error;
  }
  throw new Error("the offer was accepted");
}

describe("createOffer", () => {
  it("offers PCMU, PCMA and telephone-event 101 at 20 ms", () => {
    expect(writeSdp(createOffer(LOCAL))).toBe(
      [
        "v=0",
        "o=parley 4242 0 IN IP4 192.0.2.10",
        "s=Parley",
        "c=IN IP4 192.0.2.10",
        "t=0 0",
        "m=audio 10000 RTP/AVP 0 8 101",
        "a=rtpmap:0 PCMU/8000",
        "a=rtpmap:8 PCMA/8000",
        "a=rtpmap:101 telephone-event/8000",
        "a=fmtp:101 0-16",
        "a=ptime:20",
        "a=sendrecv",
        "",
      ].join("\r\n"),
    );
  });
});

describe("answerOffer", () => {
  it("answers sipp's PCMU-only offer (a static payload type, no rtpmap) with PCMU and no DTMF", () => {
    const { answer, media } = answerOffer(parseSdp(offer("m=audio 6000 RTP/AVP 0")), LOCAL);
    expect(media).toEqual({
      remoteAddress: "127.0.0.1",
      remotePort: 6000,
      codec: { name: "PCMU", payloadType: 0, clockRate: 8000 },
      dtmfPayloadType: null,
      ptime: 20,
      direction: "sendrecv",
    });
    const text = writeSdp(answer);
    expect(text).toContain("c=IN IP4 192.0.2.10\r\n");
    expect(text).toContain("m=audio 10000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=ptime:20\r\na=sendrecv\r\n");
    expect(text).not.toContain("telephone-event");
  });

  it("takes the offer's first supported codec (PCMA) and echoes its telephone-event (sipp uac_pcap)", () => {
    const text = offer("m=audio 6000 RTP/AVP 18 8 0 101", "a=rtpmap:18 G729/8000", "a=rtpmap:101 telephone-event/8000", "a=fmtp:101 0-11,16", "a=ptime:30");
    const { answer, media } = answerOffer(parseSdp(text), LOCAL);
    expect(media.codec).toEqual({ name: "PCMA", payloadType: 8, clockRate: 8000 });
    expect(media.dtmfPayloadType).toBe(101);
    expect(media.ptime).toBe(30);
    expect(answer.media[0]!.formats).toEqual(["8", "101"]);
    expect(writeSdp(answer)).toContain("a=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\n");
  });

  it("echoes dynamic payload types: PCMU on 96 and telephone-event on 100", () => {
    const text = offer("m=audio 6000 RTP/AVP 96 100", "a=rtpmap:96 pcmu/8000", "a=rtpmap:100 telephone-event/8000");
    const { answer, media } = answerOffer(parseSdp(text), LOCAL);
    expect(media.codec).toEqual({ name: "PCMU", payloadType: 96, clockRate: 8000 });
    expect(media.dtmfPayloadType).toBe(100);
    expect(answer.media[0]!.formats).toEqual(["96", "100"]);
  });

  it("turns the direction round and refuses the streams it does not take with port 0", () => {
    const text = offer("m=video 5000 RTP/AVP 31\r\nm=audio 6000 RTP/AVP 0\r\na=sendonly");
    const { answer, media } = answerOffer(parseSdp(text), LOCAL);
    expect(media.direction).toBe("recvonly");
    expect(answer.media.map((m) => `${m.media} ${m.port} ${m.formats.join(" ")} ${m.direction}`)).toEqual(["video 0 31 null", "audio 10000 0 recvonly"]);
  });

  it("refuses an offer with no common codec, no audio, or no IPv4 address", () => {
    expect(refusal(offer("m=audio 6000 RTP/AVP 18 3", "a=rtpmap:18 G729/8000"))).toBe("no_common_codec");
    expect(refusal(offer("m=audio 6000 RTP/AVP 0", "a=rtpmap:0 PCMU/16000"))).toBe("no_common_codec");
    expect(refusal(offer("m=audio 6000 RTP/SAVP 0"))).toBe("no_common_codec");
    expect(refusal(offer("m=video 6000 RTP/AVP 31"))).toBe("no_audio");
    expect(refusal(offer("m=audio 0 RTP/AVP 0"))).toBe("no_audio");
    expect(refusal(offer("m=audio 6000 RTP/AVP 0").replace("c=IN IP4 127.0.0.1", "c=IN IP6 ::1"))).toBe("unsupported_address");
    expect(refusal(offer("m=audio 6000 RTP/AVP 0").replace("c=IN IP4 127.0.0.1\r\n", ""))).toBe("malformed");
  });
});

describe("readAnswer", () => {
  it("reads the answer to our own offer", () => {
    const { answer } = answerOffer(parseSdp(writeSdp(createOffer(LOCAL))), { address: "198.51.100.5", port: 20002, sessionId: "7" });
    expect(readAnswer(parseSdp(writeSdp(answer)))).toEqual({
      remoteAddress: "198.51.100.5",
      remotePort: 20002,
      codec: { name: "PCMU", payloadType: 0, clockRate: 8000 },
      dtmfPayloadType: 101,
      ptime: 20,
      direction: "sendrecv",
    });
  });

  it("refuses an answer that rejected the audio stream", () => {
    const text = offer("m=audio 0 RTP/AVP 0");
    expect(() => readAnswer(parseSdp(text))).toThrow(SdpError);
  });
});
