import type { AudioFrame } from "../../engine/audio/audio-frame.js";

const FRAME_SAMPLES = 160; // 20 ms at 8 kHz
const FRAME_MS = 20;

export interface PhoneLineOptions {
  /** Silence sent after the speech, as a G.711 phone keeps sending packets (default none; Infinity: until `until`). */
  thenSilenceMs?: number;
  /** Checked before every frame: true stops sending (the call ended, the menu got its key). */
  until?: () => boolean;
}

/**
 * Sends 8 kHz audio over a call the way a phone does: a 20 ms packet per 20 ms of audio, kept
 * to the clock. Frame n is due `20 ms × n` after the start, and the frames due after a late
 * wake-up go out together, as a network delivers a delayed burst.
 *
 * Why not `sendAudio` then a 20 ms sleep: each sleep lasts at least 20 ms and more on a busy
 * event loop, so such a sender falls behind real time (15% behind in a loaded test run). The
 * far end's jitter buffer then runs dry every few hundred ms and plays silence inside words,
 * and the recognizer hears "a ploy to" for "appointments".
 */
export async function sendLikeAPhone(line: { sendAudio(frame: AudioFrame): void }, speech: Int16Array, options: PhoneLineOptions = {}): Promise<void> {
  const speechFrames = Math.ceil(speech.length / FRAME_SAMPLES);
  const frames = speechFrames + (options.thenSilenceMs ?? 0) / FRAME_MS;
  const startedAt = performance.now();
  for (let sent = 0; sent < frames; ) {
    const due = Math.min(frames, Math.floor((performance.now() - startedAt) / FRAME_MS) + 1);
    for (; sent < due; sent++) {
      if (options.until?.()) return;
      const samples = new Int16Array(FRAME_SAMPLES);
      if (sent < speechFrames) samples.set(speech.subarray(sent * FRAME_SAMPLES, (sent + 1) * FRAME_SAMPLES));
      line.sendAudio({ samples, sampleRate: 8000 });
    }
    if (sent < frames) await new Promise((resolve) => setTimeout(resolve, Math.max(0, startedAt + sent * FRAME_MS - performance.now())));
  }
}
