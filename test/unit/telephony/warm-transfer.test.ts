import { EventEmitter } from "eventemitter3";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { AudioFrame, CallEvent, CallSummary, LiveCall, LiveCallOptions, MediaTransport, TransportEvents } from "../../../engine/index.js";
import { HeldLine } from "../../../src/telephony/held-line.js";
import { WarmTransfers, type PersonLine } from "../../../src/telephony/warm-transfer.js";
import { testAgent } from "../../helpers/dialogue.js";

// The warm transfer's decisions (bridge, fall back to cold, give up) with lines and a briefing
// session that the test drives; test/e2e/warm-transfer.test.ts runs it over SIP.

/** A line that notes what it is sent and can be made to hang up. */
class FakeLine extends EventEmitter<TransportEvents> implements MediaTransport {
  readonly protocol = "sip";
  readonly inputSampleRate = 8000;
  readonly outputSampleRate = 8000;
  readonly sent: AudioFrame[] = [];
  readonly events: CallEvent[] = [];
  closedWith: string | null = null;
  get closed(): boolean {
    return this.closedWith !== null;
  }
  sendAudio(frame: AudioFrame): void {
    this.sent.push(frame);
  }
  clearAudio(): void {}
  sendMark(): void {}
  sendEvent(event: CallEvent): void {
    this.events.push(event);
  }
  close(reason: string): void {
    this.closedWith ??= reason;
  }
  hangUp(): void {
    this.closedWith ??= "hung up";
    this.emit("hangup", "bye");
  }
}

/** A briefing session that says its first message at once (state speaking, then listening) and notes it. */
function briefingEngine(briefings: string[], behave: "say" | "never_ends" = "say") {
  return {
    createCall(options: LiveCallOptions): LiveCall {
      briefings.push(options.agent.firstMessage ?? "");
      const session = new EventEmitter<{ event: (event: CallEvent) => void }>();
      let resolveEnded!: (summary: CallSummary) => void;
      const ended = new Promise<CallSummary>((resolve) => (resolveEnded = resolve));
      const stop = async () => {
        options.transport.close("transferred");
        resolveEnded({ reason: "transferred", durationMs: 0, transcript: [], recording: null, turns: [], startedAt: 0, actions: [] });
        return ended;
      };
      return Object.assign(session, {
        ended,
        start: async () => {
          if (behave === "never_ends") return;
          session.emit("event", { type: "state", state: "speaking" });
          setTimeout(() => session.emit("event", { type: "state", state: "listening" }), 5);
        },
        stop,
        hangUpWith: stop,
        transcriptSoFar: () => [],
      }) as unknown as LiveCall;
    },
  };
}

/** A caller's line held at the end of a session that transferred to `number`. */
function heldCaller(number = "+14155550100"): { line: FakeLine; held: HeldLine } {
  const line = new FakeLine();
  const held = new HeldLine(line);
  held.sendEvent({ type: "transfer", number });
  held.close("transferred");
  return { line, held };
}

const summary = { transcript: [{ role: "user" as const, content: "i would like to talk to someone about my bill", timestamp: 3 }], actions: [] };
const request = (caller: HeldLine) => ({ callId: "call_1", accountId: "acct_1", caller, to: "+14155550100", from: "+14155550190", agent: testAgent({ name: "Desk", metadata: { business_name: "Acme Dental" } }), summary, maxBridgeMs: 60_000 });
const frame = (level: number): AudioFrame => ({ samples: new Int16Array(160).fill(level), sampleRate: 8000 });
const logger = pino({ level: "silent" });

describe("warm transfers", () => {
  it("holds the caller's line when the session ends transferred: no REFER, no BYE", () => {
    const { line, held } = heldCaller();
    expect(held.held).toBe(true);
    expect(line.closed).toBe(false);
    expect(line.events).toEqual([]);
  });

  it("lets a cold transfer through when the agent on the line transfers cold", () => {
    const line = new FakeLine();
    const held = new HeldLine(line, { holdsTransfer: () => false });
    held.sendEvent({ type: "transfer", number: "+14155550100" });
    held.close("transferred");
    expect(held.held).toBe(false);
    expect(line.events).toEqual([{ type: "transfer", number: "+14155550100" }]);
    expect(line.closedWith).toBe("transferred");
  });

  it("ends a bridge, and a transfer still ringing, when asked (the call ended through the API)", async () => {
    const bridged = heldCaller();
    const person = new FakeLine();
    const transfers = new WarmTransfers(briefingEngine([]), async () => ({ outcome: "answered", transport: person }), logger);
    const first = transfers.start(request(bridged.held));
    expect((await first.briefed).outcome).toBe("bridged");
    first.end();
    await first.done;
    expect([bridged.line.closedWith, person.closedWith]).toEqual(["transfer ended", "transfer ended"]);

    const ringing = heldCaller();
    const never = new WarmTransfers(briefingEngine([]), (_call, signal) => new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: "no_answer", reason: "cancelled" }))), logger);
    const second = never.start(request(ringing.held));
    second.end();
    expect(await second.briefed).toMatchObject({ outcome: "abandoned" });
    expect(await second.done).toBe(0);
    expect(ringing.line.closedWith).toBe("ended");
    expect(ringing.line.events).toEqual([]);
  });

  it("lets a deaf line pass on no audio (the briefing is not cut by what the person says), and everything else", () => {
    const line = new FakeLine();
    const deaf = new HeldLine(line, { deaf: true });
    const heard: string[] = [];
    deaf.on("audio", () => heard.push("audio")).on("hangup", () => heard.push("hangup"));
    line.emit("audio", frame(1000));
    line.emit("hangup", "bye");
    expect(heard).toEqual(["hangup"]);
  });

  it("briefs the person in the agent's voice with the call so far, then relays each side's audio to the other until one hangs up", async () => {
    const { line: caller, held } = heldCaller();
    const person = new FakeLine();
    const dialled: Array<Parameters<PersonLine>[0]> = [];
    const briefings: string[] = [];
    const transfers = new WarmTransfers(briefingEngine(briefings), async (call) => (dialled.push(call), { outcome: "answered", transport: person }), logger);
    const { briefed, done } = transfers.start(request(held));
    expect(await briefed).toEqual({ outcome: "bridged", reason: "both sides connected" });
    expect(dialled).toEqual([{ id: "call_1-transfer", accountId: "acct_1", to: "+14155550100", from: "+14155550190" }]);
    expect(briefings).toEqual(["Hello, this is Desk from Acme Dental, with a caller for you. They said: i would like to talk to someone about my bill. I am connecting you now."]);
    // The briefing's end left the person's line up.
    expect(person.closed).toBe(false);
    caller.emit("audio", frame(1000));
    person.emit("audio", frame(2000));
    expect(person.sent.map((f) => f.samples[0])).toEqual([1000]);
    expect(caller.sent.map((f) => f.samples[0])).toEqual([2000]);
    expect(transfers.bridged).toBe(1);
    person.hangUp();
    expect(await done).toBeGreaterThanOrEqual(0);
    expect(caller.closedWith).toBe("transfer ended");
    expect(caller.events).toEqual([]);
    expect(transfers.bridged).toBe(0);
  });

  it.each([
    ["no_answer", "the person did not take the call (no_answer: 480 Temporarily Unavailable)"],
    ["busy", "the person did not take the call (busy: 486 Busy Here)"],
  ] as const)("transfers cold when the person does not answer (%s)", async (outcome, reason) => {
    const { line: caller, held } = heldCaller();
    const transfers = new WarmTransfers(briefingEngine([]), async () => ({ outcome, reason: reason.match(/: (\d.*)\)$/)![1]! }), logger);
    expect(await transfers.start(request(held)).briefed).toEqual({ outcome: "cold", reason });
    // The transfer the session decided goes out now (a REFER on SIP), then the line closes.
    expect(caller.events).toEqual([{ type: "transfer", number: "+14155550100" }]);
    expect(caller.closedWith).toBe("transferred");
  });

  it("transfers cold when the person hangs up during the briefing", async () => {
    const { line: caller, held } = heldCaller();
    const person = new FakeLine();
    const engine = briefingEngine([], "never_ends");
    const transfers = new WarmTransfers(
      {
        createCall: (options) => {
          const session = engine.createCall(options);
          setTimeout(() => person.hangUp(), 5);
          person.once("hangup", () => void session.stop("caller_hangup"));
          return session;
        },
      },
      async () => ({ outcome: "answered", transport: person }),
      logger,
    );
    expect(await transfers.start(request(held)).briefed).toEqual({ outcome: "cold", reason: "the person hung up during the briefing" });
    expect(caller.events).toEqual([{ type: "transfer", number: "+14155550100" }]);
  });

  it("gives up, calling no one else, when the caller hangs up while the person's phone rings", async () => {
    const { line: caller, held } = heldCaller();
    const transfers = new WarmTransfers(
      briefingEngine([]),
      (_call, signal) =>
        new Promise((resolve) => {
          setTimeout(() => caller.hangUp(), 5);
          signal.addEventListener("abort", () => resolve({ outcome: "no_answer", reason: "cancelled" }));
        }),
      logger,
    );
    expect(await transfers.start(request(held)).briefed).toEqual({ outcome: "abandoned", reason: "the caller hung up while the person was called" });
    expect(caller.events).toEqual([]);
  });

  it("ends a bridge at its time limit, and every bridge when the service closes", async () => {
    const { line: caller, held } = heldCaller();
    const person = new FakeLine();
    const transfers = new WarmTransfers(briefingEngine([]), async () => ({ outcome: "answered", transport: person }), logger);
    const { briefed, done } = transfers.start({ ...request(held), maxBridgeMs: 20 });
    await briefed;
    await done;
    expect([caller.closedWith, person.closedWith]).toEqual(["transfer ended", "transfer ended"]);

    const second = heldCaller();
    const otherPerson = new FakeLine();
    const more = new WarmTransfers(briefingEngine([]), async () => ({ outcome: "answered", transport: otherPerson }), logger);
    const started = more.start(request(second.held));
    await started.briefed;
    more.closeAll();
    await started.done;
    expect([second.line.closedWith, otherPerson.closedWith]).toEqual(["transfer ended", "transfer ended"]);
  });
});
