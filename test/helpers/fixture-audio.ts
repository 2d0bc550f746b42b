import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseWav } from "../../engine/audio/wav.js";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../fixtures/audio");

/** The samples of a caller line of fixtures/audio (`npm run fixtures`), at 8 or 16 kHz. */
export function fixtureAudio(name: string, rate: 8 | 16): Int16Array {
  return parseWav(readFileSync(path.join(FIXTURES, `${name}.${rate}k.wav`))).samples;
}
