import { samplesPerFrame, type AudioFrame } from "../../engine/audio/audio-frame.js";
import { decodeMulaw, encodeMulaw } from "../../engine/audio/mulaw.js";
import { NoiseSuppressor } from "../../engine/audio/noise-suppressor.js";
import { Resampler } from "../../engine/audio/resampler.js";
import type { AsrProvider, AsrSession } from "../../engine/providers/asr/asr-provider.js";
import { isDeepStrictEqual } from "node:util";
import type { ExpectedSpeech } from "../../engine/providers/asr/expected-speech.js";
import { BOOKING_SLOTS, bookingOf, expectationsOf, openEvalDialogue } from "./booking-outcome.js";
import type { BookingConversation } from "./hearing-corpus.js";
import { wordErrorRate } from "./word-error-rate.js";

/** Speech as the evaluation gets it: 16 kHz mono PCM16. */
export interface Speech {
  samples: Int16Array;
  sampleRate: number;
}

/** How the caller's speech reaches the recognizer. */
export interface Channel {
  /** `clean`, or the noise added, e.g. `10dB babble`. */
  name: string;
  /** The speech of a line as the caller's phone sends it (noise added here). */
  degrade(speech: Speech, lineId: string): Speech;
}

/** One conversation's outcome. */
export interface ConversationResult {
  id: string;
  voice: string;
  /** Each line as heard when the agent asked what it asks a caller understood so far (the per-slot figures). */
  lines: Array<{ said: string; heard: string; wer: number }>;
  /** Each line as heard in the conversation itself (the booking's figure). */
  heardLive: string[];
  /**
   * Each slot understood from its own line or not: the conversation with every other line as
   * said and that line as heard books the slot right (`yes`: it books at all).
   */
  slots: Record<HeardSlot, boolean>;
  /** The whole conversation as heard booked exactly what it asked for. */
  bookedRight: boolean;
}

/** The slots a booking conversation's lines carry, in line order (the request, day and time, name, yes). */
export const HEARD_SLOTS = ["service", "date", "time", "customer_name", "yes"] as const;
export type HeardSlot = (typeof HEARD_SLOTS)[number];
/** The line of a conversation each slot is said in. */
const LINE_OF: Record<HeardSlot, number> = { service: 0, date: 1, time: 1, customer_name: 2, yes: 3 };

/** A telephone line: 8 kHz, through G.711 mu-law, as SIP and Twilio calls arrive. */
export function phoneLine(speech: Speech): Speech {
  const narrow = new Resampler({ inputRate: speech.sampleRate, outputRate: 8000 });
  const samples = narrow.push(speech.samples);
  return { samples: decodeMulaw(encodeMulaw(samples)), sampleRate: 8000 };
}

/** `speech` as 20 ms frames, each after the event loop turns (as a live call delivers them). */
async function* frames(speech: Speech): AsyncGenerator<AudioFrame> {
  const size = samplesPerFrame(speech.sampleRate);
  for (let start = 0; start < speech.samples.length; start += size) {
    await new Promise((resolve) => setImmediate(resolve));
    yield { samples: speech.samples.slice(start, start + size), sampleRate: speech.sampleRate };
  }
}

/** The final transcript of one utterance in a session of its own. */
export async function recognizeUtterance(asr: AsrProvider, speech: Speech): Promise<string> {
  const signal = new AbortController().signal;
  const session = await asr.open({ language: "en-US", sampleRate: speech.sampleRate, signal });
  try {
    return await recognize(session, speech, signal);
  } finally {
    await session.close();
  }
}

/** The final transcript of one utterance, listened to for `expected` when given. */
async function recognize(session: AsrSession, speech: Speech, signal: AbortSignal, expected?: ExpectedSpeech | null): Promise<string> {
  let final = "";
  for await (const result of session.transcribe(frames(speech), signal, expected ?? undefined)) if (result.type === "final") final = result.text;
  return final;
}

/**
 * A conversation through the channel and the recognizer, in one recognizer session as a call
 * has (it carries what it learnt of the line from one utterance to the next), with the embedded
 * dialogue answering what was heard: each line rendered, degraded and recognized listening for
 * what the agent asked (`directed`; otherwise with the general model alone), the booking made
 * of it; then each slot on its own (the line as heard when the agent asked what a caller who
 * was understood so far would be asked, the other lines as said).
 */
export async function runConversation(
  conversation: BookingConversation,
  deps: { asr: AsrProvider; render: (text: string, voice: string) => Promise<Speech>; channel: Channel; phone: boolean; directed: boolean; denoise?: boolean },
): Promise<ConversationResult> {
  const signal = new AbortController().signal;
  // One suppressor per conversation, as a call would have: it learns the line's noise as it goes.
  const suppressor = deps.denoise ? await NoiseSuppressor.create(deps.phone ? 8000 : 16000) : undefined;
  const session = await deps.asr.open({ language: "en-US", sampleRate: deps.phone ? 8000 : 16000, signal });
  const dialogue = openEvalDialogue();
  // What a caller understood at every line is asked before each: the per-slot figures' hints.
  const asked = deps.directed ? await expectationsOf(conversation.lines) : conversation.lines.map(() => null);
  const lines: ConversationResult["lines"] = [];
  const heardLive: string[] = [];
  try {
    for (const [i, said] of conversation.lines.entries()) {
      const clean = await deps.render(said, conversation.voice);
      const line = deps.channel.degrade(clean, `${conversation.id}-${i}`);
      const heardLine = deps.phone ? phoneLine(line) : line;
      const speech = suppressor ? denoised(heardLine, suppressor) : heardLine;
      const live = deps.directed ? (dialogue.session.expectedSpeech?.() ?? null) : null;
      const heard = await recognize(session, speech, signal, live);
      // The agent asked something else (it misheard before): the slot's figure needs the line heard as an answer to the right question.
      const alone = isDeepStrictEqual(live, asked[i]) ? heard : await recognize(session, speech, signal, asked[i]);
      heardLive.push(heard);
      await dialogue.say(heard);
      lines.push({ said, heard: alone, wer: wordErrorRate(said, alone) });
    }
  } finally {
    suppressor?.close();
    await session.close();
  }
  const booking = dialogue.booked();
  const bookedRight = booking !== null && BOOKING_SLOTS.every((slot) => booking[slot] === conversation.expected[slot]);
  // Each line alone as heard, the others as said: what that line's words were understood as.
  const alone = await Promise.all(conversation.lines.map((_, i) => bookingOf(conversation.lines.map((said, j) => (j === i ? lines[i]!.heard : said)))));
  const slots = Object.fromEntries(
    HEARD_SLOTS.map((slot) => {
      const booked = alone[LINE_OF[slot]];
      return [slot, slot === "yes" ? booked !== null : booked !== null && booked !== undefined && booked[slot] === conversation.expected[slot]];
    }),
  ) as Record<HeardSlot, boolean>;
  return { id: conversation.id, voice: conversation.voice, lines, heardLive, slots, bookedRight };
}

/** `speech` through the noise suppressor, 20 ms at a time (its delay is left in: a call has it too). */
function denoised(speech: Speech, suppressor: NoiseSuppressor): Speech {
  const size = samplesPerFrame(speech.sampleRate);
  const out = new Int16Array(Math.ceil(speech.samples.length / size) * size);
  for (let start = 0; start < speech.samples.length; start += size) {
    const frame = new Int16Array(size);
    frame.set(speech.samples.subarray(start, start + size));
    out.set(suppressor.process({ samples: frame, sampleRate: speech.sampleRate }).samples, start);
  }
  return { samples: out, sampleRate: speech.sampleRate };
}

/** A condition's figures. */
export interface ConditionSummary {
  channel: string;
  conversations: number;
  utterances: number;
  /** Word errors over reference words, all lines pooled. */
  wer: number;
  /** Conversations whose booking, all lines as heard, is right in every slot. */
  bookingAccuracy: number;
  /** Per slot: the share of lines that carry it understood right (see ConversationResult.slots). */
  slotAccuracy: Record<HeardSlot, number>;
}

export function summarize(channel: string, results: readonly ConversationResult[]): ConditionSummary {
  const lines = results.flatMap((r) => r.lines);
  const words = lines.reduce((sum, line) => sum + line.said.split(/\s+/).length, 0);
  const errors = lines.reduce((sum, line) => sum + line.wer * line.said.split(/\s+/).length, 0);
  const share = (count: number) => (results.length === 0 ? 0 : count / results.length);
  return {
    channel,
    conversations: results.length,
    utterances: lines.length,
    wer: words === 0 ? 0 : errors / words,
    bookingAccuracy: share(results.filter((r) => r.bookedRight).length),
    slotAccuracy: Object.fromEntries(HEARD_SLOTS.map((slot) => [slot, share(results.filter((r) => r.slots[slot]).length)])) as Record<HeardSlot, number>,
  };
}

/** Runs `work` over `items`, `concurrency` at a time, in order of results. */
export async function pooled<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!, index);
      }
    }),
  );
  return results;
}
