/**
 * Makes the caller audio fixtures in fixtures/audio/ from text, with the engine's own Flite
 * TTS (voice rms, which the embedded recognizer reads well): a 16 kHz WAV per line, and an
 * 8 kHz one (high-quality resampler) for telephony transports. A line listed in
 * APPENDED_TONES gets a tone after its speech (an answering machine's beep). Deterministic:
 * the same Flite build gives the same bytes. Run: `npm run fixtures`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Resampler } from "../engine/audio/resampler.js";
import { encodeWav } from "../engine/audio/wav.js";
import { FestivalTts } from "../engine/providers/tts/festival/festival-tts.js";
import { FliteTts } from "../engine/providers/tts/flite/flite-tts.js";
import type { TtsProvider } from "../engine/providers/tts/tts-provider.js";
import { streamOf } from "../engine/stream/stream-of.js";
import { answerHelp } from "../src/cli/help.js";

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
  "stop-calling": "please stop calling me and take me off your list",
  "voicemail-greeting": "hi you have reached john smith i cannot take your call right now please leave a message after the tone",
  "not-interested": "i am not interested",
  "call-me-back": "i am busy right now please call me back tomorrow",
  "phone-number": "my phone number is four one five five five five zero one nine nine",
  "i-will-be-there": "yes i will be there",
  "cancel-appointment": "i need to cancel my appointment",
  "move-appointment": "could we make it wednesday at four in the afternoon",
  "phone-menu": "press one for appointments press two for billing",
  // Lines that end before the sentence does (the rest follows after a pause) and a hesitation.
  // No second backchannel besides "okay": Flite spells "mm hmm" out letter by letter, the
  // embedded recognizer reads "yeah" at 8 kHz as "you have", and the first partials of "right",
  // "sure" and "all right" ("bra", "shh", "all rye") sometimes interrupt the agent.
  "come-in-on": "i would like to come in on",
  "i-need-a": "i need a",
  um: "um",
} as const;

export type CallerLine = keyof typeof CALLER_LINES;

/**
 * A booking said in Festival's HTS voice slt (issue 30): a voice the embedded recognizer was
 * not built around, for the end-to-end bookings over the native and Twilio paths (the
 * `booking-festival` conversation). The words are the recognizer's to find; nothing here is
 * tuned to it.
 */
export const FESTIVAL_LINES = {
  "festival-book-whitening": "i would like to book a teeth whitening",
  "festival-day-and-time": "thursday at ten in the morning",
  "festival-my-name": "my name is maria garcia",
  "festival-yes": "yes that is right",
} as const;
const FESTIVAL_VOICE = "festival-slt-hts";

/** A pure tone: `silenceMs` after the speech, then `ms` of `hz` at `peak` (PCM16), with 10 ms fades. */
export interface Tone {
  silenceMs: number;
  hz: number;
  ms: number;
  peak: number;
}

/** Tones appended to a line's speech, in that line's fixture only. */
export const APPENDED_TONES: Partial<Record<CallerLine, Tone>> = {
  // The beep after the greeting: 1 kHz for 400 ms at about -12 dBFS, 100 ms after the last word
  // (Flite's own trailing silence comes first). The VAD does not take it for speech.
  "voicemail-greeting": { silenceMs: 100, hz: 1000, ms: 400, peak: 8000 },
};

const VOICE = "flite-rms";
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function synthesize(tts: TtsProvider, text: string, voiceId: string): Promise<{ samples: Int16Array; sampleRate: number }> {
  const parts: Int16Array[] = [];
  let sampleRate = 16000;
  for await (const chunk of tts.synthesize(streamOf(text), { voiceId, signal: new AbortController().signal })) {
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

/** `speech`, then `tone.silenceMs` of silence and the tone. */
export function appendTone(speech: Int16Array, sampleRate: number, tone: Tone): Int16Array {
  const gap = Math.round((tone.silenceMs / 1000) * sampleRate);
  const length = Math.round((tone.ms / 1000) * sampleRate);
  const fade = Math.round(0.01 * sampleRate);
  const out = new Int16Array(speech.length + gap + length);
  out.set(speech);
  for (let i = 0; i < length; i++) {
    const envelope = Math.min(1, i / fade, (length - 1 - i) / fade);
    out[speech.length + gap + i] = Math.round(tone.peak * envelope * Math.sin((2 * Math.PI * tone.hz * i) / sampleRate));
  }
  return out;
}

/** Writes `name`'s 16 kHz and 8 kHz WAVs (high-quality resampling from the voice's own rate). */
function writeLine(dir: string, name: string, speech: { samples: Int16Array; sampleRate: number }): void {
  const wide = speech.sampleRate === 16000 ? speech.samples : resampled(speech, 16000);
  writeFileSync(path.join(dir, `${name}.16k.wav`), encodeWav({ sampleRate: 16000, channels: 1, samples: wide }));
  writeFileSync(path.join(dir, `${name}.8k.wav`), encodeWav({ sampleRate: 8000, channels: 1, samples: resampled(speech, 8000) }));
}

function resampled(speech: { samples: Int16Array; sampleRate: number }, rate: number): Int16Array {
  const resampler = new Resampler({ inputRate: speech.sampleRate, outputRate: rate });
  return Int16Array.from([...resampler.push(speech.samples), ...resampler.flush()]);
}

async function main(): Promise<void> {
  const dir = path.join(ROOT, "fixtures", "audio");
  mkdirSync(dir, { recursive: true });
  const tts = new FliteTts({ workers: 1 });
  const festival = new FestivalTts();
  await tts.start();
  try {
    for (const [name, text] of Object.entries(CALLER_LINES) as Array<[CallerLine, string]>) {
      const speech = await synthesize(tts, text, VOICE);
      const tone = APPENDED_TONES[name];
      if (tone) speech.samples = appendTone(speech.samples, speech.sampleRate, tone);
      writeLine(dir, name, speech);
      process.stdout.write(`fixtures/audio/${name}.{16k,8k}.wav  ${(speech.samples.length / speech.sampleRate).toFixed(2)} s  "${text}"${tone ? ` + ${tone.hz} Hz tone` : ""}\n`);
    }
    for (const [name, text] of Object.entries(FESTIVAL_LINES)) {
      const speech = await synthesize(festival, text, FESTIVAL_VOICE);
      writeLine(dir, name, speech);
      process.stdout.write(`fixtures/audio/${name}.{16k,8k}.wav  ${(speech.samples.length / speech.sampleRate).toFixed(2)} s  "${text}" (${FESTIVAL_VOICE})\n`);
    }
  } finally {
    await tts.close();
    await festival.close();
  }
}

const USAGE = `npm run fixtures

Writes the caller audio fixtures in fixtures/audio/ (a 16 kHz and an 8 kHz WAV per line) from
their text, with the engine's Flite voice rms, and a booking in Festival's voice slt HTS.
Deterministic: the same Flite and Festival builds give the same bytes.`;

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  answerHelp(process.argv.slice(2), USAGE);
  main().catch((err: unknown) => {
    process.stderr.write(`make-fixtures: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
