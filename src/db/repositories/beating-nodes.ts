import type { Db } from "../database.js";

/**
 * The nodes alive as of `since` (ms): beaten at or after it, and not stopped. The one definition
 * of a live node, for the call commands sent to a node and for the recovery of a lost node's calls.
 */
export function beatingNodes(db: Db, since: number) {
  return db.selectFrom("nodes").select("nodes.id").where("nodes.heartbeat_at", ">=", since).where("nodes.stopped_at", "is", null);
}
