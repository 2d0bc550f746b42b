import { CompiledQuery, type Compilable } from "kysely";
import type { Db } from "./database.js";
import { dialectOf } from "./dialect.js";

/** Stands for one value in a query built once per shape; each run binds the run's value in its place. */
class Slot {
  constructor(readonly name: string) {}
}

/** Shapes kept per QueryShapes (a list has a few: which filters are set, the order, a cursor or not, the page size). */
const MAX_SHAPES = 256;

/**
 * Queries built and compiled by Kysely once per shape, then run with each request's values
 * bound: building and compiling a list query costs about as much as reading a page of rows,
 * and a list runs one or two per request. A shape is the name given plus which values are set:
 * `build` receives only the set values (as slots) and must decide the SQL from which are set,
 * never from what they are, and pass each to Kysely as a value (a slot turned into text, or not
 * bound at all, is refused when the shape is first compiled). Values that are unset
 * (undefined, null, "", false, 0) are left out, as an `if (filters.x)` in the builder would.
 */
export class QueryShapes {
  private readonly compiled = new Map<string, { sql: string; parameters: readonly unknown[] }>();

  async rows<Row, V extends Record<string, unknown>>(db: Db, shape: string, values: V, build: (slots: V) => Compilable<Row>): Promise<Row[]> {
    const set = Object.keys(values).filter((k) => Boolean(values[k]));
    // Compiled SQL is the dialect's own (placeholders, JSON): a process may hold both kinds of database.
    const key = `${dialectOf(db)}|${shape}|${set.join(",")}`;
    let query = this.compiled.get(key);
    if (!query) {
      const slots = Object.fromEntries(set.map((k) => [k, new Slot(k)])) as unknown as V;
      const compiled = build(slots).compile();
      const bound = new Set(compiled.parameters.filter((p): p is Slot => p instanceof Slot).map((p) => p.name));
      const missing = set.filter((k) => !bound.has(k));
      if (missing.length > 0) throw new Error(`query shape ${shape}: ${missing.join(", ")} not bound as values`);
      query = { sql: compiled.sql, parameters: compiled.parameters };
      if (this.compiled.size < MAX_SHAPES) this.compiled.set(key, query);
    }
    const parameters = query.parameters.map((p) => (p instanceof Slot ? values[p.name] : p));
    return (await db.executeQuery<Row>(CompiledQuery.raw(query.sql, parameters))).rows;
  }
}
