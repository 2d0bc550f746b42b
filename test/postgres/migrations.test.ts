import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest } from "../../src/db/database.js";
import { openPostgres } from "../../src/db/postgres.js";
import { startPostgresCluster, type PostgresCluster } from "../helpers/postgres-cluster.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgresCluster();
}, 60_000);
afterAll(() => cluster?.stop());

describe("migrations on PostgreSQL", () => {
  it("build the schema from nothing, and a second run finds nothing to do", async () => {
    const db = openPostgres(await cluster.createDatabase());
    try {
      const first = await migrateToLatest(db);
      expect(first.applied[0]).toBe("001-initial");
      expect((await migrateToLatest(db)).applied).toEqual([]);
      const types = await db
        .selectFrom("information_schema.columns" as never)
        .select(["table_name", "column_name", "data_type"] as never[])
        .where("table_name" as never, "in", ["deliveries", "agents"] as never)
        .where("column_name" as never, "in", ["next_attempt_at", "temperature"] as never)
        .execute();
      // 64-bit milliseconds and double-precision temperatures, as SQLite keeps them.
      expect(types).toEqual(expect.arrayContaining([{ table_name: "deliveries", column_name: "next_attempt_at", data_type: "bigint" }, { table_name: "agents", column_name: "temperature", data_type: "double precision" }]));
    } finally {
      await db.destroy();
    }
  });

  it("run once when several nodes start together", async () => {
    const url = await cluster.createDatabase();
    const dbs = [openPostgres(url), openPostgres(url), openPostgres(url)];
    try {
      const reports = await Promise.all(dbs.map((db) => migrateToLatest(db)));
      expect(reports.filter((r) => r.applied.length > 0)).toHaveLength(1);
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
    }
  });
});
