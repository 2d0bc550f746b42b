import { sql, type RawBuilder } from "kysely";

/**
 * A LIMIT written into the SQL as a number instead of bound as a value. SQLite plans by a
 * LIMIT's value when it can read it, so a statement whose LIMIT is a bound parameter is marked
 * to be compiled again at its next run whenever that parameter is bound again, and every run
 * binds it: a list page spent about twice as long compiling its statement as reading its rows
 * (`sqlite3Reprepare` under `sqlite3_step` in a profile). With the number in the SQL each
 * limit is its own statement, prepared once and kept by the statement cache.
 */
export function literalLimit(limit: number): RawBuilder<number> {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`LIMIT ${limit}: not a whole number of rows`);
  return sql.lit(limit);
}
