import type { Clock, TimerHandle } from "../audio/clock.js";
import type { ToolDefinition, ToolExecutor, ToolResult } from "../tools.js";

/** What the agent says while a tool keeps the reply waiting longer than TOOL_HOLD_AFTER_MS. */
export const TOOL_HOLD_LINE = "One moment, please.";
/** About when a pause in a conversation starts to feel like something went wrong. */
const TOOL_HOLD_AFTER_MS = 700;
/** A tool that has not answered by then has failed (the dialogue says it could not do it). */
const TOOL_TIMEOUT_MS = 10_000;

/** The reply a tool runs for, as the runner sees it. */
export interface ToolTurn {
  readonly abort: AbortController;
  /** Says `line` now, ahead of the rest of the reply. */
  hold?: (line: string) => void;
  /** An early reply: its tools wait until it is the answer (`released` resolves true) or dropped (false). */
  held?: { released: Promise<boolean> };
}

/** What the tool runner needs of the call it belongs to. */
export interface ToolRunnerHost {
  /** The reply the dialogue is producing now: the one whose tools run. */
  replying(): ToolTurn | undefined;
  /** A tool has run: its call and result go into the call's actions and events. */
  ran(call: { name: string; arguments: Record<string, unknown>; result: ToolResult }): void;
}

/**
 * The control plane's tools as the dialogue uses them: each run waits at most TOOL_TIMEOUT_MS
 * (then it failed, and the dialogue says so), a run still going after TOOL_HOLD_AFTER_MS has
 * the agent say TOOL_HOLD_LINE, and every run is reported with its result.
 */
export class ToolRunner implements ToolExecutor {
  readonly definitions: readonly ToolDefinition[];

  constructor(
    private readonly tools: ToolExecutor,
    private readonly clock: Clock,
    private readonly host: ToolRunnerHost,
  ) {
    this.definitions = tools.definitions;
  }

  async execute(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
    const turn = this.host.replying();
    // An early reply acts only once it is the answer: the caller may still change their mind.
    if (turn?.held && !(await turn.held.released)) return { ok: false, error: `${name} not run: the caller went on` };
    const hold = this.clock.setTimeout(() => {
      if (turn && !turn.abort.signal.aborted) turn.hold?.(TOOL_HOLD_LINE);
    }, TOOL_HOLD_AFTER_MS);
    let timer: TimerHandle | undefined;
    const timeout = new Promise<ToolResult>((resolve) => {
      timer = this.clock.setTimeout(() => resolve({ ok: false, error: `${name} did not answer within ${TOOL_TIMEOUT_MS / 1000} s` }), TOOL_TIMEOUT_MS);
    });
    let result: ToolResult;
    try {
      result = await Promise.race([this.tools.execute(name, args, signal), timeout]);
    } catch (err) {
      result = { ok: false, error: `${name} failed: ${(err as Error).message}` };
    } finally {
      this.clock.clearTimeout(hold);
      this.clock.clearTimeout(timer);
    }
    this.host.ran({ name, arguments: args, result: reported(result) });
    return result;
  }
}

/**
 * A result as the call's record and events keep it: a hand-off's `then` carries the other
 * agent's whole settings (its prompt), which are the dialogue's business only; it is kept as
 * the agent's id.
 */
function reported(result: ToolResult): ToolResult {
  if (!result.ok || typeof result.then !== "object" || !("handoff" in result.then)) return result;
  const { then, ...rest } = result;
  return { ...rest, data: { ...rest.data, agent_id: then.handoff.agent.id } };
}
