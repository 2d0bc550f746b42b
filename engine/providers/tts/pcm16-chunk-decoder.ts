import { bytesToPcm16 } from "../../audio/pcm16.js";

/**
 * Turns a PCM16 little-endian byte stream, cut anywhere by the network, into samples. A chunk
 * may end in the middle of a sample: its odd byte is carried over to the next chunk.
 */
export class Pcm16ChunkDecoder {
  private carry: number | undefined;

  /** The whole samples `bytes` completes, in fresh memory (the network's buffers are not kept). */
  push(bytes: Uint8Array): Int16Array {
    const joined = new Uint8Array((this.carry === undefined ? 0 : 1) + bytes.byteLength);
    if (this.carry !== undefined) joined[0] = this.carry;
    joined.set(bytes, joined.length - bytes.byteLength);
    const even = joined.length - (joined.length % 2);
    this.carry = even < joined.length ? joined[even] : undefined;
    return bytesToPcm16(joined.subarray(0, even));
  }
}
