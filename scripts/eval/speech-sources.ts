import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { packageRoot } from "../../engine/package-root.js";
import { encodeWav, parseWav } from "../../engine/audio/wav.js";

/**
 * Synthetic speech for the hearing evaluation from voices the embedded recognizer was never
 * tuned on (its tests only hear Flite's `rms`): Festival and eSpeak NG run as child processes,
 * their output resampled by sox to 16 kHz mono PCM16 and cached on disk, so a second run of the
 * evaluation renders nothing. A voice that is not installed fails loudly, naming the voice and
 * the command: Festival and eSpeak NG both fall back to another voice without an exit status.
 */

export type SpeechEngine = "festival" | "espeak-ng";

export interface EvalVoice {
  id: string;
  engine: SpeechEngine;
  /** Festival: the voice's name (`(voice_<name>)` selects it). eSpeak NG: the `-v` argument. */
  voice: string;
  /** The Debian package that provides it (scripts/setup.sh installs it). */
  package: string;
}

export const EVAL_VOICES: readonly EvalVoice[] = [
  { id: "festival-kal", engine: "festival", voice: "kal_diphone", package: "festvox-kallpc16k" },
  { id: "festival-slt-hts", engine: "festival", voice: "cmu_us_slt_arctic_hts", package: "festvox-us-slt-hts" },
  { id: "espeak-en-us", engine: "espeak-ng", voice: "en-us", package: "espeak-ng" },
  { id: "espeak-en-us-f", engine: "espeak-ng", voice: "en-us+f3", package: "espeak-ng" },
  { id: "espeak-en-gb", engine: "espeak-ng", voice: "en-gb", package: "espeak-ng" },
];

export const EVAL_SAMPLE_RATE = 16000;

export interface EvalSpeech {
  samples: Int16Array;
  sampleRate: typeof EVAL_SAMPLE_RATE;
}

/** Each child process's limit: a synthesizer that hangs fails the run instead of stalling it. */
const COMMAND_TIMEOUT_MS = 60_000;
/** Part of the cache key: bump when the rendering pipeline changes what a voice produces. */
const PIPELINE_VERSION = 1;

/** The voice of EVAL_VOICES with that id (a voice given whole is returned as it is). */
export function evalVoice(voiceId: string | EvalVoice): EvalVoice {
  if (typeof voiceId !== "string") return voiceId;
  const voice = EVAL_VOICES.find((v) => v.id === voiceId);
  if (!voice) throw new Error(`unknown evaluation voice "${voiceId}" (known: ${EVAL_VOICES.map((v) => v.id).join(", ")})`);
  return voice;
}

export function defaultSpeechCacheDir(): string {
  return path.join(packageRoot(import.meta.url), ".cache", "eval-speech");
}

/** The cache file of (voice, text): the same path on every run and machine. */
export function speechCachePath(text: string, voiceId: string | EvalVoice, cacheDir = defaultSpeechCacheDir()): string {
  const voice = evalVoice(voiceId);
  const key = createHash("sha256").update(JSON.stringify([PIPELINE_VERSION, voice.engine, voice.voice, text])).digest("hex").slice(0, 24);
  return path.join(cacheDir, `${voice.id}-${key}.wav`);
}

/**
 * `text` spoken by the voice (an id of EVAL_VOICES, or a voice of one's own), 16 kHz mono
 * PCM16; read from the cache when it was rendered before.
 */
export async function renderSpeech(text: string, voiceId: string | EvalVoice, cacheDir = defaultSpeechCacheDir()): Promise<EvalSpeech> {
  const cached = speechCachePath(text, voiceId, cacheDir);
  const hit = readCached(cached);
  if (hit) return hit;
  const voice = evalVoice(voiceId);
  const work = mkdtempSync(path.join(os.tmpdir(), "parley-eval-speech-"));
  try {
    const textFile = path.join(work, "text.txt");
    const rendered = path.join(work, "rendered.wav");
    const resampled = path.join(work, "16k.wav");
    writeFileSync(textFile, `${text}\n`);
    if (voice.engine === "festival") await renderFestival(voice, textFile, rendered);
    else await renderEspeak(voice, textFile, rendered);
    // --ignore-length: eSpeak NG's header declares an unknown length when writing to stdout.
    // -D: no dither, so a render is the same bytes every time.
    await run(voice, "sox", ["--ignore-length", rendered, "-D", "-r", String(EVAL_SAMPLE_RATE), "-c", "1", "-b", "16", "-e", "signed-integer", resampled]);
    const speech = fromWav(readFileSync(resampled), `${voice.id}'s resampled output`);
    if (!speech.samples.some((s) => s !== 0)) throw new Error(`voice ${voice.id} rendered silence for ${JSON.stringify(text)}`);
    mkdirSync(cacheDir, { recursive: true });
    // Written beside, then renamed: a run stopped mid-write or a concurrent one never reads half a file.
    const partial = `${cached}.${process.pid}.partial`;
    writeFileSync(partial, encodeWav({ ...speech, channels: 1 }));
    renameSync(partial, cached);
    return speech;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function renderFestival(voice: EvalVoice, textFile: string, out: string): Promise<void> {
  // Festival prints "SIOD ERROR" and exits 0 when the voice is missing (and may fall back to
  // another voice): the check that current-voice is the one asked for makes that an error.
  const select = `(begin (voice_${voice.voice}) (if (not (equal? current-voice '${voice.voice})) (error "voice ${voice.voice} did not load")))`;
  const { stderr } = await run(voice, "text2wave", ["-eval", select, "-o", out, textFile]);
  if (/SIOD ERROR|error/i.test(stderr)) throw new Error(commandFailure(voice, "text2wave", ["-eval", select, "-o", out, textFile], `festival reported: ${stderr.trim()} (is ${voice.package} installed?)`));
}

const espeakVariantChecks = new Map<string, Promise<void>>();

async function renderEspeak(voice: EvalVoice, textFile: string, out: string): Promise<void> {
  const variant = voice.voice.split("+")[1];
  // A missing language fails with an exit status; a missing variant ("+f3") is ignored silently.
  if (variant) {
    let check = espeakVariantChecks.get(variant);
    if (!check) {
      check = run(voice, "espeak-ng", ["--voices=variant"]).then(({ stdout }) => {
        if (!stdout.split("\n").some((line) => line.split(/\s+/).includes(`!v/${variant}`))) {
          throw new Error(`voice ${voice.id}: eSpeak NG has no variant "${variant}" (espeak-ng --voices=variant does not list !v/${variant})`);
        }
      });
      espeakVariantChecks.set(variant, check);
      check.catch(() => espeakVariantChecks.delete(variant));
    }
    await check;
  }
  const args = ["-v", voice.voice, "-f", textFile, "-w", out];
  const { stderr } = await run(voice, "espeak-ng", args);
  if (stderr.trim()) throw new Error(commandFailure(voice, "espeak-ng", args, stderr.trim()));
}

function run(voice: EvalVoice, command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: COMMAND_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const why = error.killed ? `timed out after ${COMMAND_TIMEOUT_MS} ms` : (error as NodeJS.ErrnoException).code === "ENOENT" ? `${command} is not installed` : `${error.message.split("\n")[0]}${stderr.trim() ? `: ${stderr.trim()}` : ""}`;
        reject(new Error(commandFailure(voice, command, args, why)));
      } else resolve({ stdout, stderr });
    });
  });
}

function commandFailure(voice: EvalVoice, command: string, args: string[], why: string): string {
  return `voice ${voice.id} (${voice.engine} ${voice.voice}, package ${voice.package}): \`${[command, ...args].map((a) => (/[\s'"()]/.test(a) ? JSON.stringify(a) : a)).join(" ")}\` failed: ${why}`;
}

/** The cached render, or undefined when there is none (or it is unreadable: it is rendered again). */
function readCached(file: string): EvalSpeech | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return fromWav(bytes, file);
  } catch {
    return undefined;
  }
}

function fromWav(bytes: Uint8Array, what: string): EvalSpeech {
  const wav = parseWav(bytes);
  if (wav.sampleRate !== EVAL_SAMPLE_RATE || wav.channels !== 1) throw new Error(`${what} is ${wav.sampleRate} Hz, ${wav.channels} channel(s), not 16 kHz mono`);
  // A copy: parseWav's samples may share (and be misaligned in) the file's buffer.
  return { samples: Int16Array.from(wav.samples), sampleRate: EVAL_SAMPLE_RATE };
}
