import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { Config } from "../config.js";
import { newId } from "../core/ids.js";
import { createPrivateFileOnce, ensurePrivateDir } from "../core/private-files.js";
import { nowIso } from "../core/time.js";
import type { Db } from "../db/database.js";
import { CallsRepository } from "../db/repositories/calls.js";
import type { CallCommands } from "./call-commands.js";
import type { CreditReservations } from "./credit-reservations.js";
import type { LiveCallsService } from "./live-calls.js";
import type { TestRunsService } from "./test-runs.js";

const NODE_ID_FILE = "node-id";

/** This node's id: PARLEY_NODE_ID, or the one kept in the data directory (made on first start). */
export function nodeIdOf(config: Pick<Config, "node" | "dataDir">): string {
  if (config.node.id) return config.node.id;
  const file = path.join(config.dataDir, NODE_ID_FILE);
  ensurePrivateDir(config.dataDir);
  if (!existsSync(file)) createPrivateFileOnce(file, `${newId("node")}\n`);
  return readFileSync(file, "utf8").trim();
}

/**
 * This node's presence among the nodes sharing the database: its row in `nodes`, beaten every
 * PARLEY_CALL_HEARTBEAT_MS, and, at each beat, the live calls of nodes that stopped beating
 * (for longer than PARLEY_NODE_GRACE_MS) closed by this one: `failed`, reason `interrupted`,
 * billed to their own last heartbeat, once whichever node notices first (closing locks the
 * call and needs it live). At start, the calls this node's previous process left live are closed
 * at once: nothing runs here yet, and then the credit holds of calls no longer live are deleted
 * (left by a process that stopped between a call's end and the release of its hold; see
 * CreditReservations). The beat also carries out the live controls other nodes sent
 * this one (CallCommands).
 */
export class NodePresence {
  private timer: NodeJS.Timeout | undefined;
  private commandTimer: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, "node" | "engine">,
    private readonly deps: { id: string; liveCalls: LiveCallsService; reservations: CreditReservations; commands: CallCommands; testRuns: TestRunsService; logger: Logger },
  ) {}

  get id(): string {
    return this.deps.id;
  }

  /**
   * Registers the node, closes the calls lost so far (its own previous process's included) and
   * deletes the credit holds of calls that are no longer live; returns how many calls were closed.
   */
  async start(): Promise<number> {
    const at = nowIso();
    const heartbeat = Date.now();
    await this.db
      .insertInto("nodes")
      .values({ id: this.id, started_at: at, heartbeat_at: heartbeat, stopped_at: null })
      .onConflict((oc) => oc.column("id").doUpdateSet({ started_at: at, heartbeat_at: heartbeat, stopped_at: null }))
      .execute();
    const closed = await this.recoverLost(true);
    // Before this node takes calls: a hold whose call has ended would keep its credit from the account's calls.
    const freed = await this.deps.reservations.releaseEnded();
    if (freed > 0) this.deps.logger.warn({ holds: freed }, "released the credit held by calls that had ended without releasing it");
    this.timer = setInterval(() => void this.beat(), this.config.engine.heartbeatMs);
    this.timer.unref();
    return closed;
  }

  /** Starts carrying out the live controls sent to this node (once its calls can be controlled). */
  startCommands(pollMs: number): void {
    this.commandTimer = setInterval(() => void this.deps.commands.runPending(this.id).catch((err: unknown) => this.deps.logger.error({ err }, "live call commands failed")), pollMs);
    this.commandTimer.unref();
  }

  /** Stops beating; a graceful stop marks the node stopped (its calls have been ended and stored). */
  async stop(options: { graceful: boolean }): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.commandTimer);
    await this.beating;
    if (options.graceful) await this.db.updateTable("nodes").set({ stopped_at: nowIso() }).where("id", "=", this.id).execute();
  }

  private beat(): Promise<void> {
    this.beating = (async () => {
      try {
        await this.db.updateTable("nodes").set({ heartbeat_at: Date.now() }).where("id", "=", this.id).execute();
        await this.recoverLost(false);
        await this.deps.commands.forgetOlderThan(new Date(Date.now() - 2 * this.config.node.graceMs).toISOString());
      } catch (err) {
        this.deps.logger.error({ err }, "node heartbeat failed");
      }
    })();
    return this.beating;
  }

  private async recoverLost(includeOwn: boolean): Promise<number> {
    const since = Date.now() - this.config.node.graceMs;
    const runs = await this.deps.testRuns.endLost(includeOwn, since);
    if (runs > 0) this.deps.logger.warn({ test_runs: runs }, "ended as error the test runs of a stopped node");
    const lost = await new CallsRepository(this.db).liveOfLostNodes(this.id, includeOwn, since);
    if (lost.length === 0) return 0;
    const closed = await this.deps.liveCalls.recoverInterrupted(lost);
    // At start the composition root reports them (calls of this node's previous process, mostly).
    if (closed > 0 && !includeOwn) {
      const nodes = [...new Set(lost.map((c) => c.node_id ?? "(none)"))];
      this.deps.logger.warn({ calls: closed, nodes }, "closed live calls of lost nodes (failed, interrupted, billed to their last heartbeat)");
    }
    return closed;
  }
}
