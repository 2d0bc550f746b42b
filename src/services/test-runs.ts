import { ApiError } from "../core/api-error.js";
import { holdAccountLock } from "../db/advisory-locks.js";
import type { Db } from "../db/database.js";
import { TestRunsRepository } from "../db/repositories/test-runs.js";
import type { TestRunTable } from "../db/schema.js";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import type { AgentsService } from "./agents.js";
import type { TestAudioService } from "./test-audio.js";
import type { CursorCodec } from "./cursor-codec.js";
import { listPage, type ListQuery } from "./list-page.js";
import type { Outbox } from "./outbox.js";
import { pendingResult, runStatus, TEST_RUN_LIMITS, type ScenarioResult, type TestRunStatus, type TestScenario } from "./test-run-scenario.js";

/** A test run as the API shows it. */
export interface TestRun {
  id: string;
  agent_id: string;
  status: TestRunStatus;
  created_at: string;
  completed_at: string | null;
  error: string | null;
  scenarios: ScenarioResult[];
}

/** A run to carry out: what the runner gets once it is stored. */
export interface StartedTestRun {
  id: string;
  accountId: string;
  agentId: string;
  scenarios: TestScenario[];
}

/** What carries runs out (the engine's side, see test-run-runner.ts); absent on a node without the engine. */
export interface TestRunCarrier {
  /** Refuses scenarios it cannot play (an unknown caller voice), naming the field; null when all can be played. */
  refusal(scenarios: readonly TestScenario[]): ApiError | null;
  /** Starts the run in the background. */
  start(run: StartedTestRun): void;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Agent test runs (issue 32): scenarios a simulated caller plays against an agent, checked
 * against what each should bring about. Stored as they go; carried out by the node that took
 * the request. Every read and write is scoped to the account and agent.
 */
export class TestRunsService {
  private readonly repo: TestRunsRepository;
  private carrier: TestRunCarrier | null = null;

  constructor(
    private readonly db: Db,
    private readonly deps: { agents: AgentsService; cursors: CursorCodec; outbox: Outbox; nodeId: string; testAudio: TestAudioService },
  ) {
    this.repo = new TestRunsRepository(db);
  }

  /** Runs are carried out by `carrier` from now on (the composition root, once the engine is up). */
  carryOutWith(carrier: TestRunCarrier): void {
    this.carrier = carrier;
  }

  /**
   * Stores a new run and starts it. 409 `test_run_limit_reached` while the account has
   * TEST_RUN_LIMITS.runningPerAccount runs going, or would pass its scenarios for the day
   * (both counted under the account's lock, so two requests cannot both slip past).
   */
  async create(accountId: string, agentId: string, scenarios: TestScenario[]): Promise<TestRun> {
    const agent = await this.deps.agents.get(accountId, agentId);
    if (agent.status !== "active") throw new ApiError(409, "agent_inactive", `Agent ${agent.id} is inactive; activate it to test it`);
    const carrier = this.carrier;
    if (!carrier) throw new ApiError(409, "test_runs_unavailable", "This node runs no calls (the engine is off), so it cannot carry out test runs");
    const refusal = carrier.refusal(scenarios);
    if (refusal) throw refusal;
    await this.checkAudio(accountId, scenarios);
    const at = nowIso();
    const row: TestRunTable = {
      id: newId("testRun"),
      account_id: accountId,
      agent_id: agent.id,
      status: "running",
      scenarios: JSON.stringify(scenarios),
      scenario_count: scenarios.length,
      results: JSON.stringify(scenarios.map(pendingResult)),
      error: null,
      node_id: this.deps.nodeId,
      created_at: at,
      completed_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      await holdAccountLock(trx, accountId);
      const running = await this.repo.countRunning(accountId, trx);
      if (running >= TEST_RUN_LIMITS.runningPerAccount) {
        throw new ApiError(409, "test_run_limit_reached", `An account runs at most ${TEST_RUN_LIMITS.runningPerAccount} test runs at once; wait for one to finish`);
      }
      const today = await this.repo.scenariosSince(accountId, new Date(Date.now() - DAY_MS).toISOString(), trx);
      if (today + scenarios.length > TEST_RUN_LIMITS.scenariosPerDay) {
        throw new ApiError(409, "test_run_limit_reached", `An account runs at most ${TEST_RUN_LIMITS.scenariosPerDay} test scenarios in 24 hours (${today} so far)`);
      }
      await this.repo.insert(row, trx);
    });
    carrier.start({ id: row.id, accountId, agentId: agent.id, scenarios });
    return present(row);
  }

  /** Every `{audio_id}` line names one of the account's clips: 400 naming the first that does not. */
  private async checkAudio(accountId: string, scenarios: readonly TestScenario[]): Promise<void> {
    const named = scenarios.flatMap((s, i) => s.caller.lines.flatMap((line, j) => (typeof line === "string" ? [] : [{ id: line.audio_id, field: `scenarios[${i}].caller.lines[${j}].audio_id` }])));
    const missing = new Set(await this.deps.testAudio.missing(accountId, [...new Set(named.map((n) => n.id))]));
    const first = named.find((n) => missing.has(n.id));
    if (first) throw ApiError.field("invalid_request", first.field, `no test audio ${first.id} in this account (POST /v1/test-audio uploads one)`);
  }

  async get(accountId: string, agentId: string, id: string): Promise<TestRun> {
    await this.deps.agents.get(accountId, agentId);
    const row = await this.repo.find(accountId, agentId, id);
    if (!row) throw new ApiError(404, "test_run_not_found", `No test run ${id} for this agent`);
    return present(row);
  }

  async list(accountId: string, agentId: string, query: ListQuery) {
    await this.deps.agents.get(accountId, agentId);
    return listPage({
      codec: this.deps.cursors,
      list: "test_runs",
      filters: { agent_id: agentId },
      query,
      fetch: (page) => this.repo.page(accountId, agentId, page),
      count: () => this.repo.count(accountId, agentId),
      present,
    });
  }

  /** Stores the results so far of a run still going (read by GET while it runs). */
  async progress(runId: string, results: readonly ScenarioResult[]): Promise<void> {
    await this.repo.saveResults(runId, JSON.stringify(results));
  }

  /**
   * Ends a run with its results (its status from theirs) or, with `error`, as not carried out;
   * writes `test_run.completed` in the same transaction. Nothing when it had ended already.
   */
  async finish(run: Pick<StartedTestRun, "id" | "accountId">, results: readonly ScenarioResult[], error: string | null = null): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const ended = await this.repo.finish(run.id, { status: error ? "error" : runStatus(results), results: JSON.stringify(results), error, completed_at: nowIso() }, trx);
      if (ended) await this.deps.outbox.append([{ accountId: run.accountId, name: "test_run.completed", data: present(ended) as unknown as Record<string, unknown> }], trx);
    });
  }

  /**
   * Ends as `error` the runs a gone node left `running` (this node's earlier process at start,
   * `includeOwn`); returns how many. Their finished scenarios' results stay.
   */
  async endLost(includeOwn: boolean, since: number): Promise<number> {
    const lost = await this.repo.runningOfLostNodes(this.deps.nodeId, includeOwn, since);
    for (const row of lost) {
      const results = (JSON.parse(row.results) as ScenarioResult[]).map((r) => (r.status === "running" || r.status === "pending" ? { ...r, status: "error" as const, error: "not run: the service stopped" } : r));
      await this.finish({ id: row.id, accountId: row.account_id }, results, "the node carrying the run stopped before it finished");
    }
    return lost.length;
  }
}

function present(row: TestRunTable): TestRun {
  return {
    id: row.id,
    agent_id: row.agent_id,
    status: row.status as TestRunStatus,
    created_at: row.created_at,
    completed_at: row.completed_at,
    error: row.error,
    scenarios: JSON.parse(row.results) as ScenarioResult[],
  };
}
