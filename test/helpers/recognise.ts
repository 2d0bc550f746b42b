import { PocketsphinxProvider } from "../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";

/** What the embedded recognizer hears in `samples` (PCM16 at `sampleRate`, 8 or 16 kHz): its finals, joined. */
export async function recognise(samples: Int16Array, sampleRate: 8000 | 16000 = 8000): Promise<string> {
  const asr = new PocketsphinxProvider({ maxRecognizers: 1 });
  const session = await asr.open({ language: "en-US", signal: new AbortController().signal });
  const frame = sampleRate / 50;
  async function* frames() {
    for (let i = 0; i < samples.length; i += frame) yield { samples: samples.subarray(i, i + frame), sampleRate };
    // Trailing silence ends the last utterance.
    for (let i = 0; i < 50; i++) yield { samples: new Int16Array(frame), sampleRate };
  }
  const heard: string[] = [];
  for await (const result of session.transcribe(frames(), new AbortController().signal)) if (result.type === "final") heard.push(result.text);
  await session.close();
  await asr.close();
  return heard.join(" ");
}
