import type SQLite from "better-sqlite3";
import type { SqliteDatabase } from "kysely";

/** Prepared statements kept; the least recently used goes past it. */
const DEFAULT_SIZE = 500;

/**
 * Hands Kysely the connection with its prepared statements kept and reused, most recently used
 * last: Kysely prepares every query it runs, and preparing costs as much as running a short
 * one. Queries differ by their SQL text only (values are bound), so a few hundred cover the
 * service. Kysely runs one statement at a time on this connection, so sharing is safe.
 */
export function withStatementCache(database: SQLite.Database, size = DEFAULT_SIZE): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare: (sql: string) => {
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = database.prepare(sql);
        if (statements.size >= size) statements.delete(statements.keys().next().value!);
      }
      statements.set(sql, statement);
      return statement;
    },
  } as SqliteDatabase;
}
