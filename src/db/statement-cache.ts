import type SQLite from "better-sqlite3";
import type { SqliteDatabase, SqliteStatement } from "kysely";

/** Prepared statements kept; the least recently used goes past it. */
const DEFAULT_SIZE = 500;
const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

/**
 * Hands Kysely the connection with its prepared statements kept and reused, most recently used
 * last: Kysely prepares every query it runs, and preparing costs as much as running a short
 * one. Queries differ by their SQL text only (values are bound), so a few hundred cover the
 * service. Kysely runs one statement at a time on this connection, so sharing is safe.
 */
export function withStatementCache(database: SQLite.Database, size = DEFAULT_SIZE): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare: (sql: string) => {
      // A schema change can change what `SELECT *` returns: statements (and their column names) are made afresh after one.
      if (SCHEMA_CHANGE.test(sql)) statements.clear();
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = withArrayRows(database.prepare(sql));
        if (statements.size >= size) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
  } as SqliteDatabase;
}

/**
 * A reading statement that fetches its rows as arrays (better-sqlite3's raw mode) and makes
 * the row objects here: the same objects as better-sqlite3 makes, about twice as fast for a
 * page of wide rows (every list endpoint reads one), since on Node 20 better-sqlite3 builds
 * objects one named property at a time through V8's slow path. Each statement's rows are made
 * by a function written for its column names (an object literal), so V8 builds them from one
 * shape; a loop assigning the names one by one, shared by every statement, went through the
 * same slow path. A later column of the same name wins, as it does in better-sqlite3.
 */
function withArrayRows(statement: SQLite.Statement): SqliteStatement {
  if (!statement.reader) return statement;
  const columnNames = () => statement.columns().map((c) => c.name);
  let names = columnNames();
  // "__proto__" in an object literal sets the prototype: such a row keeps the slow path.
  if (names.includes("__proto__")) return statement;
  statement.raw(true);
  let build = rowBuilder(names);
  const toObject = (values: unknown[]) => {
    // Another process changed the schema under this statement (SQLite prepared it again).
    if (values.length !== names.length) build = rowBuilder((names = columnNames()));
    return build(values);
  };
  return {
    reader: true,
    // Whether it writes (INSERT ... RETURNING reads rows too): the write observer needs it.
    readonly: statement.readonly,
    all: (parameters: ReadonlyArray<unknown>) => (statement.all(parameters) as unknown[][]).map(toObject),
    run: (parameters: ReadonlyArray<unknown>) => statement.run(parameters),
    *iterate(parameters: ReadonlyArray<unknown>) {
      for (const values of statement.iterate(parameters) as IterableIterator<unknown[]>) yield toObject(values);
    },
  } as SqliteStatement;
}

/**
 * `(values) => ({ "id": values[0], "name": values[1], ... })` for these column names. The names
 * are written as JSON string literals, so no name can be read as code.
 */
function rowBuilder(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(", ");
  return new Function("values", `return { ${fields} };`) as (values: unknown[]) => Record<string, unknown>;
}
