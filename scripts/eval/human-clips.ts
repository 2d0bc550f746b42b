import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseWav } from "../../engine/audio/wav.js";

/**
 * Human recordings for the hearing evaluation: the test data of Debian's
 * `pocketsphinx-testdata` package (CMU Sphinx's own test clips, BSD-licensed). Only the clips
 * whose words are known are offered:
 * - cards/*.wav with cards/cards.transcription (a speaker naming playing cards);
 * - librivox/*.wav with librivox/transcription (a LibriVox reader of Sense and Sensibility);
 * - goforward.raw and tidigits/dhd.2934z.raw, whose words are what CMU's own tests of these
 *   files expect the decoder to hear ("go forward ten meters", "two nine three four zero").
 * numbers.raw and something.raw are left out: nothing in the package says what they contain.
 * The .raw files are headerless 16-bit signed little-endian mono at 16 kHz, the format CMU's
 * tests decode them with (`-input_endian little -samprate 16000`).
 */

export const POCKETSPHINX_TESTDATA = "/usr/share/pocketsphinx/test/data";

export interface HumanClip {
  /** `<set>/<file id>`, e.g. "cards/001". */
  id: string;
  /** 16 kHz mono PCM16. */
  samples: Int16Array;
  /** Lower-case words, as the package's transcription gives them. */
  transcript: string;
}

const RAW_CLIPS: ReadonlyArray<{ id: string; file: string; transcript: string }> = [
  { id: "goforward", file: "goforward.raw", transcript: "go forward ten meters" },
  { id: "tidigits/dhd.2934z", file: "tidigits/dhd.2934z.raw", transcript: "two nine three four zero" },
];

/** Every human clip of the package, in a fixed order; fails naming the package when it is not installed. */
export function humanClips(dataDir = POCKETSPHINX_TESTDATA): HumanClip[] {
  if (!existsSync(path.join(dataDir, "goforward.raw"))) {
    throw new Error(`no pocketsphinx test data in ${dataDir}: install the pocketsphinx-testdata package (npm run setup does)`);
  }
  return [
    ...wavSet(dataDir, "cards", "cards.fileids", "cards.transcription"),
    ...wavSet(dataDir, "librivox", "fileids", "transcription"),
    ...RAW_CLIPS.map(({ id, file, transcript }) => ({ id, samples: readRaw16kLittleEndian(path.join(dataDir, file)), transcript })),
  ];
}

/** A folder of WAV files named by a fileids list, with a Sphinx transcription (`<s> words </s> (id)` per line). */
function wavSet(dataDir: string, folder: string, fileIds: string, transcription: string): HumanClip[] {
  const dir = path.join(dataDir, folder);
  const transcripts = new Map<string, string>();
  for (const line of readLines(path.join(dir, transcription))) {
    const match = /^(.*)\(([^()]+)\)\s*$/.exec(line);
    if (!match) throw new Error(`${path.join(dir, transcription)}: cannot read the line ${JSON.stringify(line)}`);
    transcripts.set(match[2]!.trim(), match[1]!.replace(/<\/?s>/g, " ").replace(/\s+/g, " ").trim());
  }
  return readLines(path.join(dir, fileIds)).map((fileId) => {
    const transcript = transcripts.get(fileId);
    if (!transcript) throw new Error(`${folder}/${fileId} has no transcript in ${transcription}`);
    const file = path.join(dir, `${fileId}.wav`);
    const wav = parseWav(readFileSync(file));
    if (wav.sampleRate !== 16000 || wav.channels !== 1) throw new Error(`${file} is ${wav.sampleRate} Hz, ${wav.channels} channel(s), not 16 kHz mono`);
    return { id: `${folder}/${fileId}`, samples: Int16Array.from(wav.samples), transcript };
  });
}

function readRaw16kLittleEndian(file: string): Int16Array {
  const bytes = readFileSync(file);
  const samples = new Int16Array(Math.floor(bytes.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
  return samples;
}

function readLines(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}
