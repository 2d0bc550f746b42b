import { PocketsphinxProvider } from "../../engine/providers/asr/pocketsphinx/pocketsphinx-provider.js";
import { parseOptions, UsageError } from "../../src/cli/args.js";
import { bookingConversations, EVAL_SET_VOICES, mix, type EvalSet } from "./hearing-corpus.js";
import { phoneLine, pooled, recognizeUtterance, runConversation, summarize, type Channel, type ConditionSummary, type Speech } from "./hearing-run.js";
import { humanClips } from "./human-clips.js";
import { babbleTalkers, withNoise, type NoiseKind } from "./noise.js";
import { renderSpeech } from "./speech-sources.js";
import { wordErrorRate } from "./word-error-rate.js";

export const HEARING_USAGE = `npm run eval:hearing -- [--set test|dev] [--size small|full] [--noise clean,20,10,5]
                         [--noise-kind babble|street|white] [--wideband] [--undirected] [--denoise] [--json]

Word error rate and booking accuracy of the embedded recognizer on speech it was not built
around: booking conversations (a service, a day and time, a name, a yes) said by Festival and
eSpeak NG voices, with noise added at each signal-to-noise ratio in dB, over a phone line (8 kHz
mu-law; --wideband: 16 kHz), scored by what the embedded dialogue books from what was heard; and
the human recordings of pocketsphinx-testdata. The test set (default) is what is reported; the
dev set is for tuning. --size small: one conversation per voice (CI); full: eight. Each line is
listened to for what the agent asked (a day and time, a name...); --undirected: with the general
model alone, as before the dialogue told the recognizer. --denoise: the caller's audio through
RNNoise (engine/audio/noise-suppressor.ts) before the recognizer.`;

/** Conversations per voice by size. */
const PER_VOICE = { small: 1, full: 8 } as const;
/** The voices babble is made of: the development set's (never a voice whose figures are reported). */
const BABBLE_VOICES = EVAL_SET_VOICES.dev;

export interface HearingReport {
  set: EvalSet;
  size: keyof typeof PER_VOICE;
  line: "phone" | "wideband";
  /** Lines listened to for what the agent asked (false: the general model alone). */
  directed: boolean;
  /** The caller's audio went through RNNoise first. */
  denoised: boolean;
  noiseKind: NoiseKind;
  conditions: ConditionSummary[];
  /** Human read speech (pocketsphinx-testdata), clean: word error rate over all clips. */
  human: { clips: number; wer: number } | null;
  /** Every line said and heard, for reading the errors. */
  transcripts: Array<{ channel: string; id: string; said: string; heard: string }>;
}

/** Parses the command line; throws UsageError. */
export function hearingOptions(argv: string[]) {
  const values = parseOptions(argv, {
    set: { type: "string", default: "test" },
    size: { type: "string", default: "full" },
    noise: { type: "string", default: "clean,20,10,5" },
    "noise-kind": { type: "string", default: "babble" },
    wideband: { type: "boolean", default: false },
    undirected: { type: "boolean", default: false },
    denoise: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
  });
  if (values.set !== "test" && values.set !== "dev") throw new UsageError("--set must be test or dev");
  if (values.size !== "small" && values.size !== "full") throw new UsageError("--size must be small or full");
  const kind = values["noise-kind"];
  if (kind !== "babble" && kind !== "street" && kind !== "white") throw new UsageError("--noise-kind must be babble, street or white");
  const noise = values.noise.split(",").map((part) => part.trim());
  if (noise.length === 0 || noise.some((n) => n !== "clean" && !/^-?\d+$/.test(n))) throw new UsageError('--noise takes a comma list of "clean" and SNRs in dB, e.g. clean,20,10,5');
  return { set: values.set as EvalSet, size: values.size as keyof typeof PER_VOICE, noise, kind: kind as NoiseKind, wideband: values.wideband, directed: !values.undirected, denoise: values.denoise, json: values.json };
}

/** Runs the evaluation; `progress` hears a line per conversation. */
export async function evaluateHearing(options: ReturnType<typeof hearingOptions>, progress: (line: string) => void = () => {}): Promise<HearingReport> {
  const asr = new PocketsphinxProvider({ maxRecognizers: 2 });
  try {
    await asr.warmUp();
    const talkers = options.noise.some((n) => n !== "clean") && options.kind === "babble" ? await babbleTalkers(BABBLE_VOICES) : undefined;
    const conversations = bookingConversations(options.set, PER_VOICE[options.size]);
    const conditions: ConditionSummary[] = [];
    const transcripts: HearingReport["transcripts"] = [];
    for (const noise of options.noise) {
      const channel: Channel =
        noise === "clean"
          ? { name: "clean", degrade: (speech) => speech }
          : {
              name: `${noise} dB ${options.kind}`,
              degrade: (speech, lineId) => ({ ...speech, samples: withNoise(speech.samples, Number(noise), { kind: options.kind, seed: seedOf(lineId), talkers }) }),
            };
      const results = await pooled(conversations, 2, async (conversation) => {
        const result = await runConversation(conversation, { asr, render: renderSpeech, channel, phone: !options.wideband, directed: options.directed, denoise: options.denoise });
        progress(`${channel.name} ${conversation.id}: ${result.bookedRight ? "booked right" : "not booked right"}, ${Object.values(result.slots).filter(Boolean).length}/5 slots understood`);
        return result;
      });
      for (const result of results) for (const line of result.lines) transcripts.push({ channel: channel.name, id: result.id, said: line.said, heard: line.heard });
      conditions.push(summarize(channel.name, results));
    }
    // Human speech is held out by nature: reported with the test set only.
    const human = options.set === "test" ? await humanWer(asr, options.wideband, options.size === "small" ? 3 : undefined) : null;
    return { set: options.set, size: options.size, line: options.wideband ? "wideband" : "phone", directed: options.directed, denoised: options.denoise, noiseKind: options.kind, conditions, human, transcripts };
  } finally {
    await asr.close();
  }
}

async function humanWer(asr: PocketsphinxProvider, wideband: boolean, most?: number): Promise<{ clips: number; wer: number }> {
  const clips = humanClips().slice(0, most);
  let words = 0;
  let errors = 0;
  for (const clip of clips) {
    const speech: Speech = { samples: clip.samples, sampleRate: 16000 };
    const heard = await recognizeUtterance(asr, wideband ? speech : phoneLine(speech));
    const count = clip.transcript.split(/\s+/).length;
    words += count;
    errors += wordErrorRate(clip.transcript, heard) * count;
  }
  return { clips: clips.length, wer: words === 0 ? 0 : errors / words };
}

/** A stable seed per line, so a line gets the same noise in every run. */
function seedOf(text: string): number {
  return mix(...Array.from(text, (c) => c.charCodeAt(0)));
}

const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/** The report as a table. */
export function hearingTable(report: HearingReport): string {
  const rows = [
    `hearing evaluation: ${report.set} set (${report.set === "test" ? "held out: the reported figures" : "development: for tuning"}), ${report.size}, ${report.line === "phone" ? "phone line (8 kHz mu-law)" : "wideband 16 kHz"}, ${report.directed ? "listening for what the agent asked" : "general model alone"}${report.denoised ? ", RNNoise first" : ""}`,
    "",
    "condition            conversations  utterances  WER     bookings right  service  date    time    name    yes",
  ];
  for (const c of report.conditions) {
    const s = c.slotAccuracy;
    rows.push(
      `${c.channel.padEnd(20)} ${String(c.conversations).padStart(13)}  ${String(c.utterances).padStart(10)}  ${percent(c.wer).padEnd(7)} ${percent(c.bookingAccuracy).padStart(14)}  ${percent(s.service).padEnd(7)}  ${percent(s.date).padEnd(6)}  ${percent(s.time).padEnd(6)}  ${percent(s.customer_name).padEnd(6)}  ${percent(s.yes)}`,
    );
  }
  if (report.human) rows.push("", `human read speech (pocketsphinx-testdata, ${report.human.clips} clips): WER ${percent(report.human.wer)}`);
  return rows.join("\n");
}
