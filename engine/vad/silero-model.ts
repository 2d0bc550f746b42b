import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

/**
 * The Silero VAD v5 model file: shipped by @ricky0123/vad-web (0.0.31) as
 * `dist/silero_vad_v5.onnx`, which is upstream silero-vad v5.1.2's `silero_vad.onnx`.
 * Pinned by sha256 so a package update cannot swap the model (v6 ships beside it) unnoticed.
 */
export const SILERO_MODEL_SPECIFIER = "@ricky0123/vad-web/dist/silero_vad_v5.onnx";
export const SILERO_MODEL_SHA256 = "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f";

/** Absolute path of the model file in node_modules; throws a clear error when it is absent. */
export function resolveSileroModelPath(): string {
  try {
    return createRequire(import.meta.url).resolve(SILERO_MODEL_SPECIFIER);
  } catch {
    throw new Error(
      `Silero VAD model not found: cannot resolve ${SILERO_MODEL_SPECIFIER}; install dependencies (npm ci) or use the webrtc VAD`,
    );
  }
}

/** Throws unless `bytes` hash to `expectedSha256`; `source` names the file in the error. */
export function verifyModelChecksum(bytes: Uint8Array, expectedSha256: string, source: string): void {
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== expectedSha256.toLowerCase()) {
    throw new Error(`Silero VAD model checksum mismatch for ${source}: expected sha256 ${expectedSha256}, got ${actual}`);
  }
}

/**
 * Reads and verifies the model. The verified bytes (not the path) go to the runtime, so the
 * file cannot change between the check and the load.
 */
export async function readSileroModel(
  modelPath: string = resolveSileroModelPath(),
  expectedSha256: string = SILERO_MODEL_SHA256,
): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(modelPath);
  } catch (error) {
    throw new Error(`Silero VAD model not readable at ${modelPath}: ${(error as Error).message}`);
  }
  verifyModelChecksum(bytes, expectedSha256, modelPath);
  return bytes;
}
