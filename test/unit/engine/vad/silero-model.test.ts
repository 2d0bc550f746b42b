import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  readSileroModel,
  resolveSileroModelPath,
  SILERO_MODEL_SHA256,
  verifyModelChecksum,
} from "../../../../engine/vad/silero-model.js";
import { SileroVadModel } from "../../../../engine/vad/silero-vad.js";

const WRONG_SHA256 = "0".repeat(64);

describe("Silero model file", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "parley-silero-model-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("resolves the v5 model from node_modules and it matches the pinned checksum", async () => {
    const modelPath = resolveSileroModelPath();
    expect(path.basename(modelPath)).toBe("silero_vad_v5.onnx");
    const bytes = await readSileroModel(modelPath);
    expect(() => verifyModelChecksum(bytes, SILERO_MODEL_SHA256, modelPath)).not.toThrow();
  });

  it("refuses bytes whose checksum differs from the expected one, naming both hashes", async () => {
    const bytes = await readSileroModel();
    expect(() => verifyModelChecksum(bytes, WRONG_SHA256, "model.onnx")).toThrow(
      new RegExp(`checksum mismatch for model\\.onnx: expected sha256 ${WRONG_SHA256}, got ${SILERO_MODEL_SHA256}`),
    );
  });

  it("refuses a file that is not the pinned model", async () => {
    const impostor = path.join(dir, "silero_vad_v5.onnx");
    writeFileSync(impostor, "not a model");
    await expect(readSileroModel(impostor)).rejects.toThrow(/checksum mismatch/);
  });

  it("says clearly when the file is missing", async () => {
    await expect(readSileroModel(path.join(dir, "absent.onnx"))).rejects.toThrow(/Silero VAD model not readable at .*absent\.onnx/);
  });

  it("does not load a model that fails verification", async () => {
    await expect(SileroVadModel.load({ expectedSha256: WRONG_SHA256 })).rejects.toThrow(/checksum mismatch/);
  });
});
