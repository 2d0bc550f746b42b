import { describe, expect, it } from "vitest";
import { isAnsweringMachineGreeting, machineCueKinds } from "../../../../../../engine/providers/llm/rules/answering-machine.js";
import { toUtterance } from "../../../../../../engine/providers/llm/rules/utterance.js";

const u = toUtterance;

describe("answering machine greetings", () => {
  it("recognises machine greetings, as the recognizer writes them and punctuated", () => {
    for (const text of [
      // The benchmark's fixture line, and what pocketsphinx made of its 8 kHz version.
      "hi you have reached john smith i cannot take your call right now please leave a message after the tone",
      "when you have reached john smith my cannot take your call right now please leave a message after the tone",
      "Hi, you've reached John Smith. I can't take your call right now. Please leave a message after the tone.",
      "the person you are calling is not available please record your message at the beep",
      "you have reached the voicemail of mary jones",
      "hi this is mary i am unable to come to the phone",
      "welcome to the voice mailbox of extension two one two",
      "sorry we missed you please leave your message and we will call you back",
    ]) {
      expect(isAnsweringMachineGreeting(u(text)), text).toBe(true);
    }
  });

  it("takes two kinds of weak cue, one naming whom you reached or asking for a message, as a greeting", () => {
    for (const text of [
      "hi you have reached john please leave a message",
      "this is mary i am not available right now leave a message",
      "this is the voicemail of john leave me a message",
      "you have reached acme dental we will get back to you as soon as possible",
    ]) {
      expect(isAnsweringMachineGreeting(u(text)), text).toBe(true);
    }
    expect(machineCueKinds(u("you have reached john please leave a message"))).toEqual(["reached", "message"]);
  });

  it("does not mistake a person on the line for a machine", () => {
    for (const text of [
      "i got your voicemail",
      "hi i got your voicemail and i am calling to return your call",
      "i left a message on your voicemail yesterday",
      "can i leave a message for doctor smith",
      "she is not available today can i leave a message",
      "he is not available right now can he call you back",
      "what is your voicemail number",
      "i got your message about my appointment",
      "you reached the right person",
      "hello who is this",
      "i would like to book an appointment",
    ]) {
      expect(isAnsweringMachineGreeting(u(text)), text).toBe(false);
    }
  });
});
