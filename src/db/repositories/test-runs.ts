import type { Db } from "../database.js";
import type { TestRunTable } from "../schema.js";
import { beatingNodes } from "./beating-nodes.js";
import { fetchPage, type Page, type PageRequest } from "./keyset.js";

/** An agent's test runs. Every query is scoped to the account (and the agent, for its lists). */
export class TestRunsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: TestRunTable, db: Db = this.db): Promise<void> {
    await db.insertInto("test_runs").values(row).execute();
  }

  async find(accountId: string, agentId: string, id: string): Promise<TestRunTable | undefined> {
    return this.db.selectFrom("test_runs").selectAll().where("account_id", "=", accountId).where("agent_id", "=", agentId).where("id", "=", id).executeTakeFirst();
  }

  async page(accountId: string, agentId: string, page: PageRequest): Promise<Page<TestRunTable>> {
    return fetchPage(this.db.selectFrom("test_runs").selectAll().where("account_id", "=", accountId).where("agent_id", "=", agentId), "test_runs", page);
  }

  async count(accountId: string, agentId: string): Promise<number> {
    const row = await this.db.selectFrom("test_runs").where("account_id", "=", accountId).where("agent_id", "=", agentId).select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The account's runs still going. */
  async countRunning(accountId: string, db: Db = this.db): Promise<number> {
    const row = await db.selectFrom("test_runs").where("account_id", "=", accountId).where("status", "=", "running").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Scenarios of the runs the account created since `since` (ISO): counted against its daily allowance. */
  async scenariosSince(accountId: string, since: string, db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom("test_runs")
      .where("account_id", "=", accountId)
      .where("created_at", ">=", since)
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>("scenario_count"), eb.lit(0)).as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Writes the results so far of a run still going. */
  async saveResults(id: string, results: string): Promise<void> {
    await this.db.updateTable("test_runs").set({ results }).where("id", "=", id).where("status", "=", "running").execute();
  }

  /** Ends a run still going; false when it had ended already (a recovery got there first). */
  async finish(id: string, end: Pick<TestRunTable, "status" | "results" | "error" | "completed_at">, db: Db = this.db): Promise<TestRunTable | undefined> {
    const result = await db.updateTable("test_runs").set({ ...end, node_id: null }).where("id", "=", id).where("status", "=", "running").executeTakeFirst();
    if (result.numUpdatedRows === 0n) return undefined;
    return db.selectFrom("test_runs").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /**
   * Runs left `running` by a node that is gone: this node's earlier process (`includeOwn`, at
   * start) or a node not beating since `since` (ms).
   */
  async runningOfLostNodes(nodeId: string, includeOwn: boolean, since: number): Promise<TestRunTable[]> {
    return this.db
      .selectFrom("test_runs")
      .selectAll()
      .where("status", "=", "running")
      .where((eb) => {
        const lost = eb.or([eb("node_id", "is", null), eb("node_id", "not in", beatingNodes(this.db, since))]);
        return includeOwn ? eb.or([eb("node_id", "=", nodeId), lost]) : eb.and([eb("node_id", "!=", nodeId), lost]);
      })
      .execute();
  }
}
