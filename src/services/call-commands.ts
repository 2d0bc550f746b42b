import { beatingNodes } from "../db/repositories/beating-nodes.js";
import { sql } from "kysely";
import { newId } from "../core/ids.js";
import { nowIso } from "../core/time.js";
import { nextUpdatedAt } from "../core/updated-at.js";
import type { Db } from "../db/database.js";
import { LIVE_CALL_STATUSES, type CallStatus } from "../db/repositories/calls.js";
import type { LiveCallControl } from "./calls.js";
import type { SupervisorAction } from "./call-supervision.js";

/** How often each node reads the commands sent to it: the delay a remote `end` adds, at most. */
export const COMMAND_POLL_MS = 250;
/** How long `POST /v1/calls/{id}/end` waits for the node running the call to end it. */
export const REMOTE_END_WAIT_MS = 5_000;
const WAIT_STEP_MS = 50;

/**
 * Live controls for calls another node runs. A node that is asked to end a call whose media runs
 * elsewhere writes a command for that node (`call_commands`), which reads its own every
 * COMMAND_POLL_MS and acts as if the request had come to it: the call is hung up and stored by
 * the node that runs it, with its transcript, recording and charge. A poll rather than
 * PostgreSQL's LISTEN/NOTIFY: it works the same on SQLite, needs no connection held open per
 * node, and a command written while the owner restarts is still read.
 */
export class CallCommands {
  private control: LiveCallControl | undefined;
  private lastSentAt = "";

  constructor(private readonly db: Db) {}

  /** Lets this node carry out the commands it is sent (set once its media gateway runs). */
  attach(control: LiveCallControl): void {
    this.control = control;
  }

  /** Whether node `nodeId` beat at or after `since` (ms) and has not stopped. */
  async isAlive(nodeId: string, since: number): Promise<boolean> {
    const row = await beatingNodes(this.db, since).where("nodes.id", "=", nodeId).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Asks node `nodeId` to end call `callId`, then waits until the call is no longer live, at most
   * REMOTE_END_WAIT_MS; true when it ended meanwhile.
   */
  async endRemotely(callId: string, nodeId: string): Promise<boolean> {
    // One pending command a call: a client repeating its request (or flooding it) adds no work
    // for the node (two racing may both insert: harmless, a hang-up is done once).
    await sql`INSERT INTO call_commands (id, node_id, call_id, command, created_at)
      SELECT ${newId("callCommand")}, ${nodeId}, ${callId}, 'end', ${nowIso()}
      WHERE NOT EXISTS (SELECT 1 FROM call_commands WHERE call_id = ${callId} AND command = 'end')`.execute(this.db);
    for (let waited = 0; waited < REMOTE_END_WAIT_MS; waited += WAIT_STEP_MS) {
      const call = await this.db.selectFrom("calls").select("status").where("id", "=", callId).executeTakeFirst();
      if (!call || !(LIVE_CALL_STATUSES as readonly string[]).includes(call.status as CallStatus)) return true;
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
    return false;
  }

  /**
   * Sends a supervisor's `say`, `whisper` or `hand_back` to node `nodeId`, which runs the call:
   * carried out at its next poll (COMMAND_POLL_MS), in the order sent.
   */
  async send(nodeId: string, callId: string, command: SupervisorAction["action"], payload: string | null): Promise<void> {
    // Each later than the last this process sent: two sent within a millisecond keep their order.
    this.lastSentAt = nextUpdatedAt(this.lastSentAt);
    await this.db.insertInto("call_commands").values({ id: newId("callCommand"), node_id: nodeId, call_id: callId, command, payload, created_at: this.lastSentAt }).execute();
  }

  /** Carries out the commands sent to node `nodeId`, oldest first; each is deleted once acted on (a call not live here any more has nothing left to do). */
  async runPending(nodeId: string): Promise<void> {
    const control = this.control;
    if (!control) return;
    const pending = await this.db.selectFrom("call_commands").select(["id", "call_id", "command", "payload"]).where("node_id", "=", nodeId).orderBy("created_at").orderBy("id").limit(100).execute();
    for (const command of pending) {
      if (command.command === "end") await control.hangUp(command.call_id);
      else if (command.command === "hand_back") control.supervise(command.call_id, { action: "hand_back" });
      else if ((command.command === "say" || command.command === "whisper") && command.payload) control.supervise(command.call_id, { action: command.command, text: command.payload });
      await this.db.deleteFrom("call_commands").where("id", "=", command.id).execute();
    }
  }

  /** Deletes the commands sent before `before` (ISO) that no node acted on: their node was lost, and its calls closed without it. */
  async forgetOlderThan(before: string): Promise<void> {
    await this.db.deleteFrom("call_commands").where("created_at", "<", before).execute();
  }
}
