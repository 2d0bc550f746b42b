import opus from "@discordjs/opus";
import { samplesPerFrame } from "./audio-frame.js";
import { bytesToPcm16, pcm16ToBytes } from "./pcm16.js";

/**
 * Opus for native WebSocket clients (browsers send Opus): mono, 20 ms frames, one codec per
 * call direction pair (the native object holds an encoder and a decoder with separate
 * state). Tuned for speech (VoIP application, voice signal). The decoder's output lags the
 * encoder's input by the codec look-ahead (6.5 ms).
 *
 * Lost packets are not concealed here: the native binding cannot ask libopus for exactly one
 * frame of concealment, so gaps are left to the caller (silence from the jitter buffer).
 */
export const OPUS_SAMPLE_RATES = [8000, 12000, 16000, 24000, 48000] as const;
export type OpusSampleRate = (typeof OPUS_SAMPLE_RATES)[number];

export interface OpusCodecOptions {
  /** Target bits per second (default 24000: transparent wideband speech). */
  bitrate?: number;
}

// libopus request codes and values (opus_defines.h).
const OPUS_SET_APPLICATION = 4000;
const OPUS_APPLICATION_VOIP = 2048;
const OPUS_SET_SIGNAL = 4024;
const OPUS_SIGNAL_VOICE = 3001;

export class OpusCodec {
  readonly sampleRate: OpusSampleRate;
  readonly frameSamples: number;
  private readonly bitrate: number;
  private native: opus.OpusEncoder | undefined;

  constructor(sampleRate: number, options: OpusCodecOptions = {}) {
    if (!isOpusSampleRate(sampleRate)) throw new RangeError(`Opus does not support ${sampleRate} Hz (use one of ${OPUS_SAMPLE_RATES.join(", ")})`);
    this.sampleRate = sampleRate;
    this.frameSamples = samplesPerFrame(sampleRate);
    this.bitrate = options.bitrate ?? 24000;
  }

  /** Encodes one 20 ms frame to one packet. */
  encode(samples: Int16Array): Buffer {
    if (samples.length !== this.frameSamples) {
      throw new RangeError(`Opus frames must be 20 ms (${this.frameSamples} samples at ${this.sampleRate} Hz), got ${samples.length}`);
    }
    return this.codec().encode(pcm16ToBytes(samples));
  }

  /** Decodes one packet (any duration the packet declares, usually 20 ms). Throws on a corrupt packet. */
  decode(packet: Uint8Array): Int16Array {
    if (packet.length === 0) throw new RangeError("empty Opus packet");
    const pcm = this.codec().decode(Buffer.isBuffer(packet) ? packet : Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
    return bytesToPcm16(pcm);
  }

  private codec(): opus.OpusEncoder {
    if (!this.native) {
      const native = new opus.OpusEncoder(this.sampleRate, 1);
      // The application can only change before the first frame is encoded.
      native.applyEncoderCTL(OPUS_SET_APPLICATION, OPUS_APPLICATION_VOIP);
      native.applyEncoderCTL(OPUS_SET_SIGNAL, OPUS_SIGNAL_VOICE);
      native.setBitrate(this.bitrate);
      this.native = native;
    }
    return this.native;
  }
}

function isOpusSampleRate(rate: number): rate is OpusSampleRate {
  return (OPUS_SAMPLE_RATES as readonly number[]).includes(rate);
}
