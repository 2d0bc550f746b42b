import { describe, expect, it } from "vitest";
import { AsrError } from "../../../../engine/providers/asr/asr-error.js";
import { ProviderError } from "../../../../engine/providers/provider-error.js";
import { FliteError } from "../../../../engine/providers/tts/flite/flite-error.js";
import { newAgentTurn, type AgentTurn } from "../../../../engine/session/agent-turn.js";
import { MAX_FAILED_TURNS, TurnFailures, type ErrorEvent } from "../../../../engine/session/turn-failures.js";

/** TurnFailures with a fake host that records what it is told: no call session around it. */
function failures() {
  const reported: ErrorEvent[] = [];
  const failed: unknown[] = [];
  const rules = new TurnFailures({ asr: { name: "sherpa" }, dialogue: { name: "rules" }, tts: { name: "piper" } }, { report: (e) => reported.push(e), fail: (err) => failed.push(err) });
  return { rules, reported, failed };
}
const retryable = () => new AsrError("recognizer_crashed", "the recognizer died", { retryable: true });
const turn = (kind: AgentTurn["kind"], textComplete = false): AgentTurn => ({ ...newAgentTurn(1, null, kind), textComplete });

describe("TurnFailures", () => {
  it("survives a provider's retryable errors, reported as recovered and naming this call's provider, until MAX_FAILED_TURNS in a row end the call", () => {
    const f = failures();
    for (let i = 1; i < MAX_FAILED_TURNS; i++) expect(f.rules.survives(retryable())).toBe(true);
    expect(f.reported).toHaveLength(MAX_FAILED_TURNS - 1);
    expect(f.reported[0]).toEqual({ type: "error", message: "the recognizer died", recovered: true, provider: { stage: "asr", name: "sherpa" } });
    expect(f.failed).toEqual([]);
    const last = retryable();
    expect(f.rules.survives(last)).toBe(false);
    expect(f.failed).toEqual([last]);
  });

  it("starts the count again after a reply the providers delivered in full (not after an aborted one, nor a fixed turn)", () => {
    const f = failures();
    for (let i = 1; i < MAX_FAILED_TURNS; i++) f.rules.survives(retryable());
    const aborted = turn("reply");
    aborted.abort.abort();
    f.rules.synthesized(aborted);
    f.rules.synthesized(turn("fixed"));
    expect(f.rules.survives(retryable())).toBe(false);
    const g = failures();
    for (let i = 1; i < MAX_FAILED_TURNS; i++) g.rules.survives(retryable());
    g.rules.synthesized(turn("reply"));
    expect(g.rules.survives(retryable())).toBe(true);
  });

  it("ends the call at the first non-retryable provider error or any other error", () => {
    for (const err of [new AsrError("recognizer_unavailable", "no model", { retryable: false }), new Error("a bug")]) {
      const f = failures();
      expect(f.rules.survives(err)).toBe(false);
      expect(f.failed).toEqual([err]);
      expect(f.reported).toEqual([]);
    }
  });

  it("decides what follows a failed reply: the call ends when the fallback voice failed, else the unheard rest of known text, else the apology", () => {
    const f = failures();
    const err = new FliteError("the worker died", { retryable: true });
    expect(f.rules.replyFailed(turn("fallback", true), err)).toBe("ended");
    expect(f.failed).toEqual([err]);
    const g = failures();
    expect(g.rules.replyFailed(turn("fixed", true), retryable())).toBe("say_rest");
    expect(g.rules.replyFailed(turn("reply", false), retryable())).toBe("apologise");
    expect(g.rules.replyFailed(turn("reply", true), retryable())).toBe("ended");
    expect(g.failed).toHaveLength(1);
  });

  it("only reports a retryable recognizer failure of words said over the agent, without counting it; any other ends the call", () => {
    const f = failures();
    for (let i = 0; i < MAX_FAILED_TURNS + 1; i++) f.rules.overAgent(retryable());
    expect(f.reported).toHaveLength(MAX_FAILED_TURNS + 1);
    expect(f.failed).toEqual([]);
    expect(f.rules.survives(retryable())).toBe(true);
    const bug = new Error("a bug");
    f.rules.overAgent(bug);
    expect(f.failed).toEqual([bug]);
  });

  it("names the provider the error names itself, and none for an error of no stage", () => {
    const f = failures();
    expect(f.rules.errorEvent(new FliteError("refused", { retryable: false }), false)).toEqual({ type: "error", message: "refused", recovered: false, provider: { stage: "tts", name: "flite" } });
    expect(f.rules.errorEvent(new ProviderError("bare", { retryable: true }), true)).toEqual({ type: "error", message: "bare", recovered: true });
    expect(f.rules.errorEvent("a string", false)).toEqual({ type: "error", message: "a string", recovered: false });
  });
});
