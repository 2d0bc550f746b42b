/**
 * Makes the caller audio fixtures in fixtures/audio/ from text, with the engine's own Flite
 * TTS (voice rms, which the embedded recognizer reads well): a 16 kHz WAV per line, and an
 * 8 kHz one (high-quality resampler) for telephony transports. Deterministic: the same Flite
 * build gives the same bytes. Run: `npm run fixtures`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Resampler } from "../engine/audio/resampler.js";
import { encodeWav } from "../engine/audio/wav.js";
import { FliteTts } from "../engine/providers/tts/flite-tts.js";

/** Fixture name -> what the caller says. */
export const CALLER_LINES = {
  "book-appointment": "i would like to book an appointment",
  "service-cleaning": "a cleaning please",
  "day-and-time": "tuesday at three in the afternoon",
  "my-name": "my name is john smith",
  "yes-please": "yes please",
  "speak-to-human": "can i speak to a human please",
  "opening-hours": "what are your opening hours",
  okay: "okay",
  "wait-stop": "wait stop please",
  goodbye: "goodbye",
} as const;

const VOICE = "flite-rms";
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function synthesize(tts: FliteTts, text: string): Promise<{ samples: Int16Array; sampleRate: number }> {
  const parts: Int16Array[] = [];
  let sampleRate = 16000;
  for await (const chunk of tts.synthesize(oneLine(text), { voiceId: VOICE, signal: new AbortController().signal })) {
    parts.push(chunk.samples);
    sampleRate = chunk.sampleRate;
  }
  const samples = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    samples.set(p, at);
    at += p.length;
  }
  return { samples, sampleRate };
}

async function* oneLine(text: string): AsyncIterable<string> {
  yield text;
}

async function main(): Promise<void> {
  const dir = path.join(ROOT, "fixtures", "audio");
  mkdirSync(dir, { recursive: true });
  const tts = new FliteTts({ workers: 1 });
  await tts.start();
  try {
    for (const [name, text] of Object.entries(CALLER_LINES)) {
      const speech = await synthesize(tts, text);
      const resampler = new Resampler({ inputRate: speech.sampleRate, outputRate: 8000 });
      const narrow = Int16Array.from([...resampler.push(speech.samples), ...resampler.flush()]);
      writeFileSync(path.join(dir, `${name}.16k.wav`), encodeWav({ sampleRate: speech.sampleRate, channels: 1, samples: speech.samples }));
      writeFileSync(path.join(dir, `${name}.8k.wav`), encodeWav({ sampleRate: 8000, channels: 1, samples: narrow }));
      process.stdout.write(`fixtures/audio/${name}.{16k,8k}.wav  ${(speech.samples.length / speech.sampleRate).toFixed(2)} s  "${text}"\n`);
    }
  } finally {
    await tts.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    process.stderr.write(`make-fixtures: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
