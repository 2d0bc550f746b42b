import { describe, expect, it } from "vitest";
import type { CallEvent } from "../../../../engine/call-events.js";
import { AgentPlayout } from "../../../../engine/playout/agent-playout.js";
import { newAgentTurn, type AgentTurn } from "../../../../engine/session/agent-turn.js";
import { EarlyReply } from "../../../../engine/session/early-reply.js";
import { FakeClock } from "../../../helpers/fake-clock.js";
import { RecordingTransport } from "../../../helpers/call-session-harness.js";

/** EarlyReply over a real playout (nothing queued) and a recorded report: no call session around it. */
function earlyReply() {
  const transport = new RecordingTransport();
  const playout = new AgentPlayout<AgentTurn>(transport, new FakeClock());
  const reported: CallEvent[] = [];
  const early = new EarlyReply<object>(playout, (event) => reported.push(event));
  const restored: string[] = [];
  const hold = (utterance: object, words: string) => {
    const turn = newAgentTurn(1, null, "reply");
    playout.begin(turn);
    early.hold(turn, utterance, words, () => restored.push(words));
    return turn;
  };
  return { transport, playout, early, reported, restored, hold };
}

describe("EarlyReply", () => {
  it("holds the turn (its release waiting) and gives it up as the answer, with the actions it held, when the turn ends with exactly its words", async () => {
    const e = earlyReply();
    const utterance = {};
    const turn = e.hold(utterance, "next tuesday");
    expect(e.early.turn).toBe(turn);
    const held = turn.held!;
    held.actions.push({ type: "transfer" });
    expect(e.early.take(utterance, "next tuesday at noon")).toBeUndefined();
    expect(e.early.take({}, "next tuesday")).toBeUndefined();
    expect(e.early.turn).toBe(turn);
    expect(e.early.take(utterance, "next tuesday")).toEqual({ turn, actions: [{ type: "transfer" }] });
    expect(await held.released).toBe(true);
    expect(turn.held).toBeUndefined();
    expect(e.early.turn).toBeUndefined();
    // The session says it used: nothing reported here, nothing put back, nothing cut.
    expect(e.reported).toEqual([]);
    expect(e.restored).toEqual([]);
    expect(turn.abort.signal.aborted).toBe(false);
    expect(e.playout.turn).toBe(turn);
  });

  it("drops the reply unheard: aborted, its audio stopped here only, released false, the conversation put back, early_reply used false reported once", async () => {
    const e = earlyReply();
    const turn = e.hold({}, "purple elephants");
    const held = turn.held!;
    e.early.drop();
    e.early.drop();
    expect(turn.abort.signal.aborted).toBe(true);
    expect(e.playout.turn).toBeUndefined();
    expect(e.transport.clears).toBe(0);
    expect(await held.released).toBe(false);
    expect(e.restored).toEqual(["purple elephants"]);
    expect(e.reported).toEqual([{ type: "early_reply", used: false }]);
    expect(e.early.turn).toBeUndefined();
  });

  it("leaves the playout alone when dropping a reply that is not the turn playing", () => {
    const e = earlyReply();
    e.hold({}, "hello");
    const other = newAgentTurn(2, null, "fixed");
    e.playout.begin(other);
    e.early.drop();
    expect(e.playout.turn).toBe(other);
    expect(e.reported).toEqual([{ type: "early_reply", used: false }]);
  });
});
