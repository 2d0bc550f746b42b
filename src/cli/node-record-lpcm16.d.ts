declare module "node-record-lpcm16" {
  import type { Readable } from "node:stream";
  export interface RecordOptions {
    sampleRate?: number;
    channels?: number;
    audioType?: "wav" | "raw";
    recorder?: "sox" | "rec" | "arecord";
    threshold?: number;
    endOnSilence?: boolean;
  }
  export interface Recording {
    stream(): Readable;
    stop(): void;
  }
  export function record(options?: RecordOptions): Recording;
}
