import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MODEL_DIR } from "../../../../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { defaultRecognizerPath, RecognizerProcess } from "../../../../../engine/providers/asr/pocketsphinx/recognizer-process.js";
import { encodeMean, encodeRequest, encodeUtteranceRequest, REQUEST, type RecognizerReply } from "../../../../../engine/providers/asr/pocketsphinx/recognizer-protocol.js";
import { ensureRecognizerBuilt } from "./built-recognizer.js";

beforeAll(() => ensureRecognizerBuilt(), 120_000);

/** Runs an empty utterance and returns the channel mean its final reports. */
async function meanAfterEmptyUtterance(recognizer: RecognizerProcess, utt: number): Promise<number[]> {
  const final = new Promise<Extract<RecognizerReply, { type: "final" }>>((resolve) => {
    const onReply = (reply: RecognizerReply) => {
      if (reply.type !== "final" || reply.utt !== utt) return;
      recognizer.off("reply", onReply);
      resolve(reply);
    };
    recognizer.on("reply", onReply);
  });
  await recognizer.send(encodeUtteranceRequest(REQUEST.startUtterance, utt));
  await recognizer.send(encodeRequest(REQUEST.endUtterance));
  return (await final).mean;
}

describe("the recognizer's channel mean (carried between the processes that serve one call)", () => {
  it("reports the mean with each final, starts from a mean it is given, and goes back to the model's prior on reset", async () => {
    const recognizer = new RecognizerProcess({ binaryPath: defaultRecognizerPath(), modelDir: DEFAULT_MODEL_DIR });
    await recognizer.start();
    try {
      const prior = await meanAfterEmptyUtterance(recognizer, 1);
      expect(prior).toHaveLength(13);
      const carried = prior.map((value, i) => value + 1.5 + i / 10);
      await recognizer.send(encodeMean(carried));
      const after = await meanAfterEmptyUtterance(recognizer, 2);
      after.forEach((value, i) => expect(value).toBeCloseTo(carried[i]!, 3));
      await recognizer.send(encodeRequest(REQUEST.reset));
      const reset = await meanAfterEmptyUtterance(recognizer, 3);
      reset.forEach((value, i) => expect(value).toBeCloseTo(prior[i]!, 3));
    } finally {
      await recognizer.stop();
    }
  }, 30_000);

  it("exits on a mean of the wrong length rather than reading garbage", async () => {
    const recognizer = new RecognizerProcess({ binaryPath: defaultRecognizerPath(), modelDir: DEFAULT_MODEL_DIR });
    await recognizer.start();
    const exited = new Promise((resolve) => recognizer.once("exit", resolve));
    await recognizer.send(encodeMean([1, 2, 3]));
    expect(await exited).toMatchObject({ code: 2, stderr: expect.stringContaining("SET_MEAN needs one float32 per cepstral coefficient") });
  }, 30_000);
});
