import { afterEach, describe, expect, it } from "vitest";
import { SipCallTransport } from "../../../../../engine/transports/sip/sip-call-transport.js";
import { agent, audioFlows, connect, once, runCleanups } from "../../../../helpers/sip-agents.js";

afterEach(runCleanups);

describe("SipCallTransport", () => {
  it("is an 8 kHz MediaTransport: audio in, marks after sent audio, hangup on BYE, close sends BYE", async () => {
    const caller = await agent();
    const callee = await agent();
    const { uacCall, uasCall } = await connect(caller.ua, callee);
    const transport = new SipCallTransport(uasCall);
    expect(transport.protocol).toBe("sip");
    expect(transport.inputSampleRate).toBe(8000);
    expect(transport.outputSampleRate).toBe(8000);
    expect(await audioFlows((frame) => uacCall.sendAudio(frame), transport)).toBeGreaterThan(1000);
    expect(await audioFlows((frame) => transport.sendAudio(frame), uacCall)).toBeGreaterThan(1000);
    const mark = once<[string]>(transport, "mark");
    transport.sendMark("m1");
    expect((await mark)[0]).toBe("m1");

    const hangup = once<[string]>(uacCall, "hangup");
    transport.close("agent_hangup");
    expect((await hangup)[0]).toBe("remote_hangup");

    const second = await connect(caller.ua, callee);
    const remote = new SipCallTransport(second.uasCall);
    const ended = once<[string]>(remote, "hangup");
    await second.uacCall.hangUp();
    expect((await ended)[0]).toBe("remote_hangup");
  });
});
