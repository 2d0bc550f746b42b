/**
 * Audio inside the engine: mono PCM16 that carries its sample rate. Frames on the call path
 * are 20 ms (FRAME_MS); provider output chunks may be any length.
 */
export interface AudioFrame {
  samples: Int16Array;
  sampleRate: number;
}

export const FRAME_MS = 20;

export function samplesPerFrame(sampleRate: number): number {
  return (sampleRate * FRAME_MS) / 1000;
}

export function durationMs(frame: AudioFrame): number {
  return (frame.samples.length * 1000) / frame.sampleRate;
}
