import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { AsrProvider } from "../../../../engine/providers/asr/asr-provider.js";
import type { DialogueEvent, DialogueProvider, DialogueSession } from "../../../../engine/providers/llm/dialogue-provider.js";
import { ProviderError } from "../../../../engine/providers/provider-error.js";
import { measured, outcomeOf, type ProviderRequest } from "../../../../engine/providers/provider-measurement.js";
import type { TtsProvider } from "../../../../engine/providers/tts/tts-provider.js";
import { NO_TOOLS } from "../../../../engine/tools.js";
import { testAgent } from "../../../helpers/dialogue.js";

class StatusError extends ProviderError {
  constructor(status: number | null, retryable: boolean) {
    super(`status ${status}`, { retryable, status });
  }
}

function dialogue(respond: (signal: AbortSignal) => AsyncIterable<DialogueEvent>, extra: Partial<DialogueSession> = {}): DialogueProvider {
  return { name: "fake", open: () => ({ respond: (_t, s) => respond(s), respondToKeys: (_d, s) => respond(s), truncateLastReply: () => {}, ...extra }) };
}

const open = (provider: DialogueProvider) => provider.open({ agent: testAgent(), context: {}, tools: NO_TOOLS });

async function drain<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("measured providers", () => {
  it("report a turn's time to its first event, its duration and ok", async () => {
    const reports: ProviderRequest[] = [];
    const provider = measured(
      "dialogue",
      dialogue(async function* () {
        await sleep(30);
        yield { type: "text", text: "Hello." };
        await sleep(30);
        yield { type: "text", text: " Bye." };
      }),
      (r) => reports.push(r),
    );
    expect(await drain(open(provider).respond("hi", new AbortController().signal))).toHaveLength(2);
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report).toMatchObject({ stage: "dialogue", provider: "fake", outcome: "ok" });
    expect(report!.firstOutputMs).toBeGreaterThanOrEqual(25);
    expect(report!.durationMs).toBeGreaterThan(report!.firstOutputMs!);
  });

  it("name a failure by its kind, and a consumer that stopped reading as aborted", async () => {
    const reports: ProviderRequest[] = [];
    const failing = (error: unknown) =>
      measured(
        "dialogue",
        dialogue(async function* () {
          throw error;
        }),
        (r) => reports.push(r),
      );
    for (const error of [new StatusError(429, true), new StatusError(503, true), new StatusError(null, true), new StatusError(401, false), new TypeError("bug")]) {
      await expect(drain(open(failing(error)).respond("hi", new AbortController().signal))).rejects.toBe(error);
    }
    expect(reports.map((r) => [r.outcome, r.firstOutputMs])).toEqual([
      ["rate_limited", null],
      ["server_error", null],
      ["no_answer", null],
      ["refused", null],
      ["failed", null],
    ]);

    reports.length = 0;
    const talkative = measured(
      "dialogue",
      dialogue(async function* () {
        for (;;) {
          yield { type: "text", text: "more " };
          await sleep(5);
        }
      }),
      (r) => reports.push(r),
    );
    for await (const _ of open(talkative).respond("hi", new AbortController().signal)) break;
    expect(reports.map((r) => r.outcome)).toEqual(["aborted"]);
  });

  it("keep a session's optional parts present or absent as they were", () => {
    const rules = open(measured("dialogue", dialogue(async function* () {}, { checkpoint: () => () => {}, judgeTurn: () => "complete" as never }), () => {}));
    expect(rules.checkpoint).toBeTypeOf("function");
    expect(rules.judgeTurn).toBeTypeOf("function");
    const remote = open(measured("dialogue", dialogue(async function* () {}), () => {}));
    // No checkpoint: the call session must not prepare early replies a remote model would bill.
    expect(remote.checkpoint).toBeUndefined();
    expect(remote.recordTurn).toBeUndefined();
  });

  it("time a synthesis to its first audio, and a recognition from the end of the audio to its final", async () => {
    const reports: ProviderRequest[] = [];
    const tts: TtsProvider = {
      name: "voice",
      voices: () => [],
      async *synthesize() {
        await sleep(20);
        yield { samples: new Int16Array(160), sampleRate: 16000 };
      },
    };
    await drain(measured("tts", tts, (r) => reports.push(r)).synthesize((async function* () {})(), { voiceId: "x", signal: new AbortController().signal }));
    expect(reports[0]).toMatchObject({ stage: "tts", provider: "voice", outcome: "ok" });
    expect(reports[0]!.firstOutputMs).toBeGreaterThanOrEqual(15);

    const asr: AsrProvider = {
      name: "ears",
      open: async () => ({
        async *transcribe(audio) {
          for await (const _frame of audio) yield { type: "partial" as const, text: "hel" };
          await sleep(40);
          yield { type: "final" as const, text: "hello" };
        },
        close: async () => {},
      }),
    };
    const session = await measured("asr", asr, (r) => reports.push(r)).open({ language: "en-US", sampleRate: 16000, signal: new AbortController().signal });
    async function* speech() {
      for (let i = 0; i < 3; i++) {
        await sleep(60);
        yield { samples: new Int16Array(320), sampleRate: 16000 };
      }
    }
    await drain(session.transcribe(speech(), new AbortController().signal));
    const recognized = reports[1]!;
    expect(recognized).toMatchObject({ stage: "asr", provider: "ears", outcome: "ok" });
    // The 40 ms after the audio ended, not the 180 ms the caller spoke for.
    expect(recognized.firstOutputMs).toBeGreaterThanOrEqual(35);
    expect(recognized.firstOutputMs).toBeLessThan(150);
    expect(recognized.durationMs).toBeGreaterThanOrEqual(200);
  });

  it("outcomeOf reads the status a provider's error carries", () => {
    expect(outcomeOf(new StatusError(408, true))).toBe("server_error");
    expect(outcomeOf(new ProviderError("no status", { retryable: false }))).toBe("refused");
  });
});
