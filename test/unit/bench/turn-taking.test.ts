import { describe, expect, it } from "vitest";
import {
  AGENT_STOP_MS,
  BACKCHANNEL_STOP_WINDOW_MS,
  agentAudioStarts,
  agentStopAfter,
  backchannelVerdict,
  falseEndpoints,
} from "../../../scripts/bench/turn-taking.js";

/** Agent frames arriving every 20 ms from `from` (inclusive) to `to` (exclusive), as a real-time paced agent sends them. */
function speech(from: number, to: number): number[] {
  const out: number[] = [];
  for (let at = from; at < to; at += 20) out.push(at);
  return out;
}

describe("agentAudioStarts", () => {
  it("starts a stretch at the first frame and after each silence of AGENT_STOP_MS or more, not at shorter pauses", () => {
    const arrivals = [...speech(1000, 2000), ...speech(2100, 2500), ...speech(2500 + AGENT_STOP_MS, 3000)];
    expect(agentAudioStarts(arrivals)).toEqual([1000, 2500 + AGENT_STOP_MS]);
    expect(agentAudioStarts([])).toEqual([]);
  });
});

describe("falseEndpoints", () => {
  // Line 1 from 0 to 1800 ms, a 700 ms pause, line 2 from 2500 to 4300 ms.
  const lines = [
    { startedAt: 0, endedAt: 1800 },
    { startedAt: 2500, endedAt: 4300 },
  ];

  it("counts agent audio that starts in the pause between lines", () => {
    const arrivals = [...speech(2350, 3000), ...speech(4700, 6000)];
    expect(falseEndpoints(arrivals, lines)).toEqual([2350]);
  });

  it("counts agent audio that starts over a later line, and every restart", () => {
    const arrivals = [...speech(2600, 2900), ...speech(3500, 3800), ...speech(4600, 5000)];
    expect(falseEndpoints(arrivals, lines)).toEqual([2600, 3500]);
  });

  it("does not count the reply after the last line, nor agent audio that started before the first line ended", () => {
    // The end of a previous reply running into the first line, then the real reply.
    const arrivals = [...speech(-500, 1900), ...speech(4600, 6000)];
    expect(falseEndpoints(arrivals, lines)).toEqual([]);
    // Nor audio that starts during the first line: the caller has not paused yet.
    expect(falseEndpoints([...speech(500, 1000), ...speech(4600, 6000)], lines)).toEqual([]);
  });

  it("never counts for a single line (there is no later line to wait for)", () => {
    expect(falseEndpoints(speech(1000, 1500), [{ startedAt: 0, endedAt: 1800 }])).toEqual([]);
  });

  it("covers every pause of a three-line step", () => {
    const three = [
      { startedAt: 0, endedAt: 700 },
      { startedAt: 1300, endedAt: 1800 },
      { startedAt: 2700, endedAt: 3400 },
    ];
    expect(falseEndpoints([...speech(1250, 1400), ...speech(2400, 2600), ...speech(3800, 4200)], three)).toEqual([1250, 2400]);
  });
});

describe("backchannelVerdict", () => {
  // A long agent turn from 0 to 12 s; the caller says "okay" from 2000 to 2500 ms; the next step at 20 s.
  const window = { startedAt: 2000, endedAt: 2500, until: 20_000 };

  it("finds no stop when the agent talks on to the natural end of its turn", () => {
    expect(backchannelVerdict(speech(0, 12_000), [], window)).toEqual({ stoppedAt: null, resumedAt: null });
  });

  it("counts a clear as a stop, and agent audio after it as a resume", () => {
    const arrivals = [...speech(0, 2400), ...speech(3600, 9000)];
    expect(backchannelVerdict(arrivals, [2400], window)).toEqual({ stoppedAt: 2400, resumedAt: 3600 });
  });

  it("counts a clear with no agent audio after it as a stop that was not resumed", () => {
    expect(backchannelVerdict(speech(0, 2400), [2400], window)).toEqual({ stoppedAt: 2400, resumedAt: null });
  });

  it("counts agent audio missing for more than AGENT_STOP_MS, without a clear, as a stop and resume", () => {
    const arrivals = [...speech(0, 2700), ...speech(2680 + AGENT_STOP_MS + 40, 9000)];
    expect(backchannelVerdict(arrivals, [], window)).toEqual({ stoppedAt: 2680, resumedAt: 2680 + AGENT_STOP_MS + 40 });
  });

  it("ignores pauses up to AGENT_STOP_MS, pauses that began before the backchannel, and stops after the window", () => {
    const shortPause = [...speech(0, 2700), ...speech(2680 + AGENT_STOP_MS, 9000)];
    expect(backchannelVerdict(shortPause, [], window).stoppedAt).toBeNull();
    const before = [...speech(0, 1900), ...speech(2600, 9000)];
    expect(backchannelVerdict(before, [], window).stoppedAt).toBeNull();
    const late = window.endedAt + BACKCHANNEL_STOP_WINDOW_MS + 100;
    expect(backchannelVerdict([...speech(0, late), ...speech(late + 1000, 9000)], [late], window)).toEqual({ stoppedAt: null, resumedAt: null });
  });

  it("does not take agent audio after the caller's next step for a resume", () => {
    const arrivals = [...speech(0, 2400), ...speech(6000, 8000)];
    expect(backchannelVerdict(arrivals, [2400], { ...window, until: 5000 })).toEqual({ stoppedAt: 2400, resumedAt: null });
  });
});

describe("agentStopAfter", () => {
  // The agent speaks from 0 to 12 s; the caller starts speaking over it at 2000 ms.
  it("is the last frame before the agent's audio goes missing, when the playout pauses without a clear", () => {
    const arrivals = [...speech(0, 2100), ...speech(3000, 12_000)];
    expect(agentStopAfter(arrivals, [], 2000, 3000)).toBe(2080);
  });

  it("is the clear when it comes first (or alone, with frames still arriving)", () => {
    expect(agentStopAfter([...speech(0, 2400), ...speech(4000, 9000)], [2380], 2000, 3000)).toBe(2380);
    expect(agentStopAfter(speech(0, 12_000), [2500], 2000, 3000)).toBe(2500);
  });

  it("is null when the agent talks on through the window, or was not speaking when the caller began", () => {
    expect(agentStopAfter(speech(0, 12_000), [], 2000, 3000)).toBeNull();
    // Quiet at 2000 ms; its next reply starting at 2600 ms is no stop.
    expect(agentStopAfter([...speech(0, 1500), ...speech(2600, 4000)], [], 2000, 3000)).toBeNull();
    // A clear long after the window does not count either.
    expect(agentStopAfter(speech(0, 12_000), [5100], 2000, 3000)).toBeNull();
  });
});
