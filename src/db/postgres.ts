import pg from "pg";
import { DataTypeNode, Kysely, OperationNodeTransformer, PostgresDialect, PostgresDriver, type Driver, type KyselyPlugin, type OperationNode, type PostgresDialectConfig } from "kysely";
import { registerCommitNotices } from "./commit-notices.js";
import { registerGeneration } from "./database-generation.js";
import { PostgresChanges } from "./postgres-changes.js";
import type { Database } from "./schema.js";

/** Connections each node keeps to PostgreSQL at most. */
export const POSTGRES_POOL_SIZE = 10;

/**
 * The column types migrations name (SQLite's) as PostgreSQL needs them: SQLite's INTEGER holds
 * 64 bits and the schema keeps milliseconds since the epoch in some (PostgreSQL's `integer` is
 * 32 bits), and SQLite's REAL is a double (PostgreSQL's `real` is a float, which would change
 * an agent's temperature 0.7 into 0.699999988).
 */
class PostgresColumnTypes extends OperationNodeTransformer {
  protected override transformDataType(node: DataTypeNode): DataTypeNode {
    if (node.dataType === "integer") return DataTypeNode.create("bigint");
    if (node.dataType === "real") return DataTypeNode.create("double precision");
    return node;
  }
}

const columnTypes: KyselyPlugin = {
  transformQuery: (args) => new PostgresColumnTypes().transformNode(args.node as OperationNode) as typeof args.node,
  transformResult: async (args) => args.result,
};

/**
 * bigint (count(*), every INTEGER column) and numeric (sum()) come back as numbers, as SQLite
 * gives them: every value Parley keeps in them is far below 2^53.
 */
const numericTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as "text");
  }) as pg.CustomTypesConfig["getTypeParser"],
};

/**
 * Opens a pool of connections to the PostgreSQL database at `url`. A connection that breaks
 * while idle (the server restarted) is reported to `onError` and replaced on the next query,
 * instead of the error ending the process. Its generation (database-generation.ts) follows
 * the changes to accounts and API keys, and its commit notices the inserted deliveries,
 * through one more connection opened when first asked and closed with the pool.
 */
export function openPostgres(url: string, options: { onError?: (err: Error) => void; poolSize?: number } = {}): Kysely<Database> {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? POSTGRES_POOL_SIZE, types: numericTypes });
  pool.on("error", (err) => options.onError?.(err));
  const changes = new PostgresChanges(url, options.onError);
  const db = new Kysely<Database>({ dialect: new ListeningPostgresDialect({ pool }, changes), plugins: [changes.plugin] });
  registerGeneration(db, changes.generation);
  registerCommitNotices(db, changes.onCommitted);
  return db;
}

/** PostgreSQL's dialect, whose destroy() also stops listening for changes. */
class ListeningPostgresDialect extends PostgresDialect {
  constructor(
    private readonly config: PostgresDialectConfig,
    private readonly changes: PostgresChanges,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const changes = this.changes;
    return new (class extends PostgresDriver {
      override async destroy(): Promise<void> {
        await changes.close();
        await super.destroy();
      }
    })(this.config);
  }
}

/** `db` with the migrations' column types translated (see PostgresColumnTypes); for running migrations only. */
export function withPostgresColumnTypes<T>(db: Kysely<T>): Kysely<T> {
  return db.withPlugin(columnTypes);
}
