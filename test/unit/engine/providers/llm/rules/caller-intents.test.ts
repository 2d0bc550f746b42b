import { describe, expect, it } from "vitest";
import {
  goodbyeKind,
  isBookingRequest,
  isIdentityQuestion,
  isQuestion,
  isRepeatRequest,
  isTransferRequest,
  isDoNotCallRequest,
  slotToChange,
  yesOrNo,
} from "../../../../../../engine/providers/llm/rules/caller-intents.js";
import { toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";

const u = toUtterance;

describe("caller intents", () => {
  it("reads yes and no, with a negation winning", () => {
    for (const text of ["yes", "yeah", "yep sounds good", "that's right", "okay book it", "sure", "uh huh", "correct"]) expect(yesOrNo(u(text)), text).toBe("yes");
    for (const text of ["no", "nope", "that's not right", "no that's wrong", "wait", "hold on"]) expect(yesOrNo(u(text)), text).toBe("no");
    expect(yesOrNo(u("purple monkey"))).toBeNull();
  });

  it("tells a goodbye from a closing that depends on context", () => {
    expect(goodbyeKind(u("bye"), [])).toBe("strong");
    expect(goodbyeKind(u("okay thanks good bye"), [])).toBe("strong");
    expect(goodbyeKind(u("no thanks that's it"), [])).toBe("done");
    expect(goodbyeKind(u("that's all"), [])).toBe("done");
    expect(goodbyeKind(u("we are done here"), ["done here"])).toBe("strong");
    expect(goodbyeKind(u("i would like to see you tomorrow"), [])).toBeNull();
    expect(goodbyeKind(u("by friday"), [])).toBeNull();
  });

  it("hears requests for a human, with recognizer slips", () => {
    for (const text of ["can i speak to a human", "representative", "operater please", "i want to talk to someone", "get me a real person", "transfer me to an agent", "representitive"]) {
      expect(isTransferRequest(u(text)), text).toBe(true);
    }
    for (const text of ["are you a real person", "is this a human", "can i book for another person", "in person", "hello"]) {
      expect(isTransferRequest(u(text)), text).toBe(false);
    }
    expect(isIdentityQuestion(u("are you a robot"))).toBe(true);
    expect(isIdentityQuestion(u("are you able to transfer me to a human"))).toBe(false);
  });

  it("hears a callee asking not to be called again, and not a pause or a call-back", () => {
    for (const text of [
      "please stop calling me", "stop calling me", "take me off your list", "take me off your calling list", "remove me from your list",
      "remove my number", "don't call me again", "never call me again", "put me on the do not call list", "i don't want any more calls",
      "please stop calling me and take me off your list", "i am not interested lose my number",
    ]) {
      expect(isDoNotCallRequest(u(text)), text).toBe(true);
    }
    for (const text of ["wait stop please", "stop", "can you call me back tomorrow", "please call me later", "don't book it", "i don't want a cleaning", "hello"]) {
      expect(isDoNotCallRequest(u(text)), text).toBe(false);
    }
  });

  it("hears booking requests", () => {
    for (const text of ["i would like to book an appointment", "can i make an apointment", "i need to schedule a cleaning", "booking please"]) expect(isBookingRequest(u(text)), text).toBe(true);
    for (const text of ["what are your hours", "hello", "my name is john"]) expect(isBookingRequest(u(text)), text).toBe(false);
  });

  it("tells questions for information from requests", () => {
    expect(isQuestion(u("are you open on saturday"))).toBe(true);
    expect(isQuestion(u("how much is a cleaning"))).toBe(true);
    expect(isQuestion(u("can i come in on saturday"))).toBe(false);
    expect(isQuestion(u("tuesday at three"))).toBe(false);
  });

  it("hears requests to repeat", () => {
    for (const text of ["what", "sorry", "can you repeat that", "sorry i didn't catch that", "say that again please"]) expect(isRepeatRequest(u(text)), text).toBe(true);
    expect(isRepeatRequest(u("sorry i meant four pm"))).toBe(false);
    expect(isRepeatRequest(u("what are your hours"))).toBe(false);
  });

  it("names the part of a booking to change", () => {
    expect(slotToChange(u("the time"))).toBe("time");
    expect(slotToChange(u("wrong day"))).toBe("date");
    expect(slotToChange(u("my name is spelled wrong"))).toBe("name");
    expect(slotToChange(u("the service"))).toBe("service");
    expect(slotToChange(u("everything is fine"))).toBeNull();
  });
});
