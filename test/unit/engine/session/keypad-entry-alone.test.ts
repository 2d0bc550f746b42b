import { describe, expect, it } from "vitest";
import type { CallEvent } from "../../../../engine/call-events.js";
import { KEYPAD_GAP_MS, KeypadEntry, MAX_KEYS, MAX_KEYS_PER_SECOND, type KeyEntry } from "../../../../engine/session/keypad-entry.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

/** KeypadEntry with a fake host that records what it is told: no call session around it. */
function keypad(state: { ending?: boolean; closing?: boolean } = {}) {
  const clock = new FakeClock();
  const reported: CallEvent[] = [];
  const pressedAt: number[] = [];
  const entries: KeyEntry[] = [];
  const entry = new KeypadEntry(clock, {
    isEnding: () => state.ending ?? false,
    isClosing: () => state.closing ?? false,
    report: (event) => reported.push(event),
    keyPressed: (atMs) => pressedAt.push(atMs),
    entered: (e) => entries.push(e),
  });
  const digits = () => reported.flatMap((e) => (e.type === "dtmf" ? [e.digit] : []));
  const errors = () => reported.filter((e) => e.type === "error");
  return { clock, entry, reported, pressedAt, entries, digits, errors };
}

describe("KeypadEntry", () => {
  it("makes keys pressed within KEYPAD_GAP_MS of each other one entry, complete KEYPAD_GAP_MS after the last key", () => {
    const k = keypad();
    k.clock.advance(100);
    k.entry.press("4");
    k.clock.advance(KEYPAD_GAP_MS - 1);
    k.entry.press("2");
    k.clock.advance(KEYPAD_GAP_MS - 1);
    expect(k.entries).toEqual([]);
    k.clock.advance(1);
    expect(k.entries).toEqual([{ keys: "42", startedAt: 100, lastKeyAt: 100 + KEYPAD_GAP_MS - 1 }]);
    // Every key was reported and stopped the agent at once.
    expect(k.digits()).toEqual(["4", "2"]);
    expect(k.pressedAt).toEqual([100, 100 + KEYPAD_GAP_MS - 1]);
  });

  it("ends an entry at # at once; # alone is no entry", () => {
    const k = keypad();
    k.entry.press("7");
    k.entry.press("#");
    expect(k.entries.map((e) => e.keys)).toEqual(["7"]);
    k.entry.press("#");
    k.clock.advance(KEYPAD_GAP_MS * 2);
    expect(k.entries.map((e) => e.keys)).toEqual(["7"]);
    expect(k.digits()).toEqual(["7", "#", "#"]);
    expect(k.pressedAt).toHaveLength(3);
  });

  it("gives an entry of MAX_KEYS keys at once, whatever follows", () => {
    const k = keypad();
    // Slow enough for the flood guard, fast enough for one entry.
    for (let i = 0; i < MAX_KEYS; i++) {
      k.entry.press(String(i % 10));
      k.clock.advance(60);
    }
    expect(k.entries).toHaveLength(1);
    expect(k.entries[0]!.keys).toHaveLength(MAX_KEYS);
    k.entry.press("5");
    k.clock.advance(KEYPAD_GAP_MS);
    expect(k.entries.map((e) => e.keys)).toEqual([k.entries[0]!.keys, "5"]);
  });

  it("drops keys past MAX_KEYS_PER_SECOND, reporting the flood once, and takes keys again the next second", () => {
    const k = keypad();
    for (let i = 0; i < MAX_KEYS_PER_SECOND + 10; i++) k.entry.press("1");
    expect(k.digits()).toHaveLength(MAX_KEYS_PER_SECOND);
    expect(k.pressedAt).toHaveLength(MAX_KEYS_PER_SECOND);
    expect(k.errors()).toEqual([{ type: "error", message: `keys dropped: more than ${MAX_KEYS_PER_SECOND} a second`, recovered: true }]);
    k.clock.advance(1000);
    k.entry.press("2");
    expect(k.digits()).toHaveLength(MAX_KEYS_PER_SECOND + 1);
    k.clock.advance(KEYPAD_GAP_MS);
    expect(k.entries.map((e) => e.keys)).toEqual(["1".repeat(MAX_KEYS_PER_SECOND), "2"]);
  });

  it("reports keys pressed while the call says its closing line but takes none, and ignores keys once the call is ending", () => {
    const state = { closing: true, ending: false };
    const k = keypad(state);
    k.entry.press("3");
    k.clock.advance(KEYPAD_GAP_MS * 2);
    expect(k.digits()).toEqual(["3"]);
    expect(k.pressedAt).toEqual([]);
    expect(k.entries).toEqual([]);
    state.ending = true;
    k.entry.press("4");
    expect(k.reported).toHaveLength(1);
  });

  it("hands over the keys of an entry not yet complete as the call ends, and completes no entry after stop()", () => {
    const k = keypad();
    k.clock.advance(50);
    k.entry.press("9");
    k.entry.press("8");
    k.entry.stop();
    expect(k.entry.takePending()).toEqual({ keys: "98", startedAt: 50 });
    expect(k.entry.takePending()).toBeUndefined();
    k.clock.advance(KEYPAD_GAP_MS * 2);
    expect(k.entries).toEqual([]);
    expect(k.clock.pendingTimers).toBe(0);
  });
});
