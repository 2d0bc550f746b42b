import { describe, expect, it } from "vitest";
import { SdpError } from "../../../../../engine/transports/sip/sdp-error.js";
import { effectiveConnection, effectiveDirection, parseSdp, writeSdp } from "../../../../../engine/transports/sip/sdp.js";

/** The body of sipp's built-in uac_pcap INVITE, as sipp sends it for -mp 6000 on 127.0.0.1. */
const SIPP_UAC_PCAP_OFFER = [
  "v=0",
  "o=user1 53655765 2353687637 IN IP4 127.0.0.1",
  "s=-",
  "c=IN IP4 127.0.0.1",
  "t=0 0",
  "m=audio 6000 RTP/AVP 8 101",
  "a=rtpmap:8 PCMA/8000",
  "a=rtpmap:101 telephone-event/8000",
  "a=fmtp:101 0-11,16",
  "",
].join("\r\n");

function sdpError(run: () => unknown): SdpError {
  try {
    run();
  } catch (error) {
    if (error instanceof SdpError) return error;
    throw error;
  }
  throw new Error("expected an SdpError");
}

describe("parseSdp / writeSdp", () => {
  it("reads sipp's uac_pcap offer into fields", () => {
    const sdp = parseSdp(SIPP_UAC_PCAP_OFFER);
    expect(sdp.origin).toEqual({ username: "user1", sessionId: "53655765", sessionVersion: "2353687637", addressType: "IP4", address: "127.0.0.1" });
    expect(sdp.sessionName).toBe("-");
    expect(sdp.connection).toEqual({ addressType: "IP4", address: "127.0.0.1" });
    expect(sdp.timing).toEqual({ start: 0, stop: 0 });
    expect(sdp.media).toHaveLength(1);
    const audio = sdp.media[0]!;
    expect(audio).toMatchObject({ media: "audio", port: 6000, protocol: "RTP/AVP", formats: ["8", "101"], connection: null, ptime: null, direction: null });
    expect(audio.rtpMaps).toEqual([
      { payloadType: 8, encoding: "PCMA", clockRate: 8000, channels: null },
      { payloadType: 101, encoding: "telephone-event", clockRate: 8000, channels: null },
    ]);
    expect(audio.formatParameters).toEqual([{ payloadType: 101, parameters: "0-11,16" }]);
    expect(effectiveDirection(sdp, audio)).toBe("sendrecv");
    expect(effectiveConnection(sdp, audio)?.address).toBe("127.0.0.1");
  });

  it("writes it back byte for byte, and a reparse gives the same description", () => {
    const sdp = parseSdp(SIPP_UAC_PCAP_OFFER);
    expect(writeSdp(sdp)).toBe(SIPP_UAC_PCAP_OFFER);
    expect(parseSdp(writeSdp(sdp))).toEqual(sdp);
  });

  it("takes LF line endings, media-level c=, ptime, directions and other attributes, and keeps them on a round trip", () => {
    const text = [
      "v=0",
      "o=- 1 2 IN IP4 10.0.0.1",
      "s=call",
      "c=IN IP4 10.0.0.1",
      "b=AS:64",
      "t=0 0",
      "a=sendonly",
      "a=tool:softphone 1.0",
      "m=audio 49170 RTP/AVP 0 96",
      "c=IN IP4 192.0.2.7/127",
      "a=rtpmap:0 PCMU/8000",
      "a=rtpmap:96 opus/48000/2",
      "a=ptime:30",
      "a=rtcp:49171",
      "a=inactive",
      "m=video 0 RTP/AVP 31",
    ].join("\n");
    const sdp = parseSdp(text);
    const [audio, video] = sdp.media;
    expect(sdp.direction).toBe("sendonly");
    expect(sdp.attributes).toEqual([{ name: "tool", value: "softphone 1.0" }]);
    expect(audio!.connection).toEqual({ addressType: "IP4", address: "192.0.2.7" });
    expect(effectiveConnection(sdp, audio!)?.address).toBe("192.0.2.7");
    expect(effectiveConnection(sdp, video!)?.address).toBe("10.0.0.1");
    expect(audio!.rtpMaps[1]).toEqual({ payloadType: 96, encoding: "opus", clockRate: 48000, channels: 2 });
    expect(audio!.ptime).toBe(30);
    expect(audio!.attributes).toEqual([{ name: "rtcp", value: "49171" }]);
    expect(effectiveDirection(sdp, audio!)).toBe("inactive");
    expect(effectiveDirection(sdp, video!)).toBe("sendonly");
    expect(video!.port).toBe(0);
    expect(parseSdp(writeSdp(sdp))).toEqual(sdp);
  });

  it("refuses what is not SDP with reason malformed", () => {
    expect(sdpError(() => parseSdp("hello")).reason).toBe("malformed");
    expect(sdpError(() => parseSdp("v=0\r\ns=-\r\nt=0 0\r\n")).message).toMatch(/o= line/);
    expect(sdpError(() => parseSdp(SIPP_UAC_PCAP_OFFER.replace("6000", "port"))).message).toMatch(/m= line/);
    expect(sdpError(() => parseSdp(SIPP_UAC_PCAP_OFFER.replace("m=audio 6000 RTP/AVP 8 101", "m=audio 6000 RTP/AVP"))).reason).toBe("malformed");
    expect(sdpError(() => parseSdp(SIPP_UAC_PCAP_OFFER.replace("c=IN IP4 127.0.0.1", "c=IN"))).message).toMatch(/c= line/);
    expect(sdpError(() => parseSdp(SIPP_UAC_PCAP_OFFER.replace("t=0 0", "t=now"))).reason).toBe("malformed");
  });
});
