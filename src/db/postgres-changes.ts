import pg from "pg";
import { AliasNode, DeleteQueryNode, InsertQueryNode, TableNode, UpdateQueryNode, type KyselyPlugin, type OperationNode } from "kysely";
import type { CommitNotices } from "./commit-notices.js";
import type { DatabaseGeneration } from "./database-generation.js";

/** The channel the triggers of migrations 022 and 026 notify on, with the changed table's name. */
export const CHANGES_CHANNEL = "parley_changes";
/** The tables a generation on PostgreSQL follows. */
const WATCHED_TABLES = new Set(["accounts", "api_keys"]);
/** How long after losing its listening connection a node tries again. */
const RECONNECT_MS = 1_000;

/**
 * A DatabaseGeneration for PostgreSQL, which has no change counter to read: a connection of
 * its own LISTENs for the notifications migration 022's triggers send when accounts or
 * api_keys change (on any node, or through psql), and this node's own writes to them count at
 * once, before their notification arrives. While that connection is not listening (not yet
 * connected, or lost), every call returns a value never seen before, so nothing is kept.
 *
 * A change committed by another node is seen when its notification arrives (on loopback,
 * within a millisecond or so of the commit); a write of this node's inside a transaction,
 * when the transaction's notification arrives.
 *
 * The same connection serves commit notices (see CommitNotices): with a listener subscribed,
 * it is opened at once and reopened a second after it is lost.
 */
export class PostgresChanges {
  private client: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private seen = 0;
  private unseen = 0;
  private retry: NodeJS.Timeout | undefined;
  private readonly committed = new Map<string, Array<() => void>>();

  constructor(
    private readonly connectionString: string,
    private readonly onError?: (err: Error) => void,
  ) {}

  /** The generation (see DatabaseGeneration); the first call starts listening. */
  readonly generation: DatabaseGeneration = () => {
    if (!this.client && !this.retry && !this.closed) this.listen();
    return this.listening ? String(this.seen) : `unseen:${++this.unseen}`;
  };

  /** Commit notices (see CommitNotices). */
  readonly onCommitted: CommitNotices = (table, listener) => {
    this.committed.set(table, [...(this.committed.get(table) ?? []), listener]);
    if (!this.client && !this.retry && !this.closed) this.listen();
  };

  /** A plugin for the pool's Kysely that counts this node's own writes to watched tables. */
  readonly plugin: KyselyPlugin = {
    transformQuery: (args) => {
      if (WATCHED_TABLES.has(writtenTable(args.node) ?? "")) this.written.add(args.queryId);
      return args.node;
    },
    transformResult: async (args) => {
      if (this.written.delete(args.queryId)) this.seen++;
      return args.result;
    },
  };
  private readonly written = new WeakSet<object>();

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }

  private listen(): void {
    const client = new pg.Client({ connectionString: this.connectionString, keepAlive: true });
    this.client = client;
    const lost = (err?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.listening = false;
      if (err) this.onError?.(err);
      void client.end().catch(() => {});
      if (this.closed) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (this.committed.size > 0) this.listen();
      }, RECONNECT_MS).unref();
    };
    client.on("notification", (message) => {
      const table = message.payload ?? "";
      if (WATCHED_TABLES.has(table)) this.seen++;
      for (const listener of this.committed.get(table) ?? []) listener();
    });
    client.on("error", lost);
    client.on("end", () => lost());
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANGES_CHANNEL}`))
      .then(() => {
        if (this.client !== client) return;
        // Changes made before LISTEN took effect were never notified: start a new generation.
        this.seen++;
        this.listening = true;
        for (const listener of [...this.committed.values()].flat()) listener();
      }, lost);
  }
}

/** The table an INSERT, UPDATE or DELETE writes; undefined for anything else. */
function writtenTable(node: OperationNode): string | undefined {
  if (InsertQueryNode.is(node)) return tableName(node.into);
  if (UpdateQueryNode.is(node)) return tableName(node.table);
  if (DeleteQueryNode.is(node)) return tableName(node.from.froms[0]);
  return undefined;
}

function tableName(node: OperationNode | undefined): string | undefined {
  if (node && AliasNode.is(node)) return tableName(node.node);
  return node && TableNode.is(node) ? node.table.identifier.name : undefined;
}
