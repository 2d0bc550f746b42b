// Microphone capture on the audio thread: mono input at the context's rate, resampled to the
// call's rate, cut into 20 ms PCM16 little-endian frames posted to the main thread (which
// sends each as one binary WebSocket message). Muted, it sends silence: the call needs audio
// all along, as a phone line carries it.
import { Resampler } from "./resampler.js";

/** One render quantum of silence. */
const SILENCE = new Float32Array(128);

class CaptureProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const rate = options.processorOptions.targetRate;
    this.resampler = new Resampler(sampleRate, rate);
    this.frame = new Int16Array(rate / 50);
    this.filled = 0;
    this.peak = 0;
    this.muted = false;
    this.port.onmessage = (event) => {
      if (event.data?.type === "mute") this.muted = Boolean(event.data.muted);
    };
  }

  process(inputs) {
    // No input (the track ended or is not connected yet) is silence: the call needs audio all along.
    const channel = inputs[0]?.[0] ?? SILENCE;
    const samples = this.resampler.process(channel);
    for (let i = 0; i < samples.length; i++) {
      const value = this.muted ? 0 : Math.max(-1, Math.min(1, samples[i]));
      const abs = Math.abs(value);
      if (abs > this.peak) this.peak = abs;
      this.frame[this.filled++] = value < 0 ? value * 0x8000 : value * 0x7fff;
      if (this.filled === this.frame.length) {
        const bytes = new Uint8Array(this.frame.buffer.slice(0));
        this.port.postMessage({ type: "frame", pcm: bytes.buffer, peak: this.peak }, [bytes.buffer]);
        this.filled = 0;
        this.peak = 0;
      }
    }
    return true;
  }
}

registerProcessor("parley-capture", CaptureProcessor);
