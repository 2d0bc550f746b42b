import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Identifier prefixes, one per resource kind (the reference's plus Parley's own). */
export const ID_PREFIXES = {
  account: "acct_",
  apiKey: "key_",
  agent: "agent_",
  call: "call_",
  phoneNumber: "pn_",
  webhook: "wh_",
  appointment: "apt_",
  campaign: "cmp_",
  contact: "cc_",
  ledger: "led_",
  request: "req_",
  delivery: "dlv_",
  event: "evt_",
  doNotCall: "dnc_",
  node: "node_",
  callCommand: "cmd_",
  knowledgeBase: "kb_",
  kbDocument: "kbdoc_",
  kbPassage: "kbp_",
  testRun: "testrun_",
  testAudio: "taud_",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/**
 * Random bytes drawn from a pool filled by the system's CSPRNG a few kilobytes at a time (each
 * byte used once): every request takes an id, and asking the system for 40 bytes each time
 * cost more than the id's other work.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function randomByte(): number {
  if (poolOffset >= pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Random base62 string; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export function newId(kind: IdKind): string {
  return ID_PREFIXES[kind] + randomBase62(20);
}
