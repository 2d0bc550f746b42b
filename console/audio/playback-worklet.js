// The agent's voice on the audio thread: PCM16 frames at the call's rate, resampled to the
// context's rate, played through a small jitter buffer. Playback starts once `jitterMs` of
// audio is queued (or the first queued sample has waited that long: the end of a reply is not
// held back), and after a gap it waits to refill. `clear` (barge-in) drops everything queued
// at once. Marks are echoed back once everything queued before them has been played.
import { Resampler } from "./resampler.js";

class PlaybackProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { inputRate, jitterMs } = options.processorOptions;
    this.resampler = new Resampler(inputRate, sampleRate);
    this.target = Math.round((jitterMs / 1000) * sampleRate);
    this.chunks = [];
    this.offset = 0; // read position in chunks[0]
    this.queued = 0;
    this.playing = false;
    this.waitingSince = -1; // currentFrame when the queue went from empty to not empty
    this.enqueued = 0; // samples ever queued (output rate)
    this.played = 0; // samples ever played from the queue
    this.marks = [];
    this.port.onmessage = (event) => this.receive(event.data);
  }

  receive(message) {
    if (message.type === "audio") {
      const pcm = new Int16Array(message.pcm);
      const input = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) input[i] = pcm[i] / 0x8000;
      const samples = this.resampler.process(input);
      if (samples.length === 0) return;
      if (this.queued === 0 && this.waitingSince < 0) this.waitingSince = currentFrame;
      this.chunks.push(samples);
      this.queued += samples.length;
      this.enqueued += samples.length;
    } else if (message.type === "mark") {
      this.marks.push({ name: message.name, at: this.enqueued });
      this.releaseMarks();
    } else if (message.type === "clear") {
      const dropped = this.queued;
      this.chunks = [];
      this.offset = 0;
      this.queued = 0;
      this.played = this.enqueued;
      if (this.playing) this.port.postMessage({ type: "speaking", speaking: false });
      this.playing = false;
      this.waitingSince = -1;
      this.resampler.reset();
      this.releaseMarks();
      this.port.postMessage({ type: "cleared", droppedMs: Math.round((dropped / sampleRate) * 1000) });
    }
  }

  releaseMarks() {
    while (this.marks.length > 0 && this.marks[0].at <= this.played) this.port.postMessage({ type: "mark", name: this.marks.shift().name });
  }

  process(_inputs, outputs) {
    const output = outputs[0];
    const first = output[0];
    if (!first) return true;
    if (!this.playing && this.queued > 0 && (this.queued >= this.target || currentFrame - this.waitingSince >= this.target)) {
      this.playing = true;
      this.port.postMessage({ type: "speaking", speaking: true });
    }
    let written = 0;
    if (this.playing) {
      while (written < first.length && this.chunks.length > 0) {
        const chunk = this.chunks[0];
        const take = Math.min(first.length - written, chunk.length - this.offset);
        first.set(chunk.subarray(this.offset, this.offset + take), written);
        written += take;
        this.offset += take;
        if (this.offset === chunk.length) {
          this.chunks.shift();
          this.offset = 0;
        }
      }
      this.queued -= written;
      this.played += written;
      if (this.queued === 0) {
        // Ran dry: refill before playing on (the end of a reply, or a late frame).
        this.playing = false;
        this.waitingSince = -1;
        this.port.postMessage({ type: "speaking", speaking: false });
      }
      this.releaseMarks();
    }
    first.fill(0, written);
    for (let c = 1; c < output.length; c++) output[c].set(first);
    return true;
  }
}

registerProcessor("parley-playback", PlaybackProcessor);
