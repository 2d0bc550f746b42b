import { sql, type RawBuilder } from "kysely";
import type { SqlDialect } from "./dialect.js";

/**
 * How one field of a JSON object written by SQLite is read from its row. Only the kinds whose
 * JSON SQLite writes exactly as JavaScript's JSON.stringify does (the list pages' tests hold
 * them to it byte for byte): text, integers and null as they are, 0/1 as booleans, JSON text
 * columns, nested objects. No REAL: SQLite writes reals with 15 significant digits, JavaScript
 * with as many as it takes to read the same number back.
 */
export type JsonField = { kind: "value"; column: string } | { kind: "boolean"; column: string } | { kind: "json"; column: string; whenNull: string } | { kind: "object"; fields: JsonFields };

export type JsonFields = Readonly<Record<string, JsonField>>;

export const jsonField = {
  /** A TEXT or INTEGER column, or null, as it is. */
  value: (column: string): JsonField => ({ kind: "value", column }),
  /** An INTEGER 0/1 column as false/true. */
  boolean: (column: string): JsonField => ({ kind: "boolean", column }),
  /** A column holding JSON text (written by JSON.stringify), embedded as JSON; `whenNull` (JSON text) when it is NULL or JSON's null. */
  json: (column: string, whenNull: string): JsonField => ({ kind: "json", column, whenNull }),
  object: (fields: JsonFields): JsonField => ({ kind: "object", fields }),
};

function sqliteExpression(field: JsonField): RawBuilder<unknown> {
  switch (field.kind) {
    case "value":
      return sql`${sql.ref(field.column)}`;
    case "boolean":
      return sql`json(CASE WHEN ${sql.ref(field.column)} THEN 'true' ELSE 'false' END)`;
    case "json":
      return sql`json(coalesce(nullif(${sql.ref(field.column)}, 'null'), ${sql.lit(field.whenNull)}))`;
    case "object":
      return sqliteObject(field.fields);
  }
}

/** `json_object('a', a, 'b', json(b), ...)`: SQLite writes the object itself. */
function sqliteObject(fields: JsonFields): RawBuilder<string> {
  const parts = Object.entries(fields).flatMap(([key, field]) => [sql.lit(key), sqliteExpression(field)]);
  return sql<string>`json_object(${sql.join(parts)})`;
}

/**
 * The JSON text of one field, concatenated by PostgreSQL. Its json_build_object writes
 * `{"a" : 1, "b" : 2}`, not JSON.stringify's `{"a":1,"b":2}`, so the object is put together
 * from to_json's texts, whose escapes are JSON.stringify's (\", \\, \b \f \n \r \t, other
 * control characters as lower-case \u00xx). A JSON column's text is JSON.stringify's already.
 */
function postgresExpression(field: JsonField): RawBuilder<string> {
  switch (field.kind) {
    case "value":
      return sql<string>`coalesce(to_json(${sql.ref(field.column)})::text, 'null')`;
    case "boolean":
      return sql<string>`(CASE WHEN ${sql.ref(field.column)} <> 0 THEN 'true' ELSE 'false' END)`;
    case "json":
      return sql<string>`coalesce(nullif(${sql.ref(field.column)}, 'null'), ${sql.lit(field.whenNull)})`;
    case "object":
      return postgresObject(field.fields);
  }
}

function postgresObject(fields: JsonFields): RawBuilder<string> {
  const parts = Object.entries(fields).map(([key, field], i) => sql`${sql.lit(`${i === 0 ? "{" : ","}${JSON.stringify(key)}:`)} || ${postgresExpression(field)}`);
  return sql<string>`(${sql.join(parts, sql` || `)} || '}')`;
}

/**
 * The object as JSON text, built by the database from the row, its keys in the order given,
 * byte for byte what JSON.stringify would write. A page of such texts is sent as it is read:
 * no row object, no presenter object and no JSON.stringify per row (on Node 20 better-sqlite3
 * makes each cell of a row through V8's slow path; one text per row is the cheap way out).
 */
export function jsonObject(dialect: SqlDialect, fields: JsonFields): RawBuilder<string> {
  return dialect === "postgres" ? postgresObject(fields) : sqliteObject(fields);
}
