/**
 * What the agent has just asked the caller for, given with each utterance to the recognizer.
 * The embedded recognizer decodes the answer a second time with a grammar of such answers (see
 * pocketsphinx/answer-grammar.ts): on a telephone line it hears "tuesday at three" far better
 * when it knows a day and a time are coming. Remote recognizers ignore it.
 */
export interface ExpectedSpeech {
  /**
   * `service`: which of the agent's services; `date`: a day (perhaps with a time);
   * `time`: a time (perhaps with a day); `name`: their name; `yes_no`: an answer to a yes/no
   * question.
   */
  answer: "service" | "date" | "time" | "name" | "yes_no";
  /** The agent's services, as callers name them ("cleaning", "teeth whitening"). */
  services: readonly string[];
  /** Names the agent already has for the caller (the call's customer name), beside common ones. */
  names: readonly string[];
}
